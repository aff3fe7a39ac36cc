#include "aws/digest.h"

#include <openssl/evp.h>
#include <openssl/hmac.h>

#include "base/error.h"

namespace onepass::aws {

std::string sha256(std::string_view data) {
  unsigned char out[EVP_MAX_MD_SIZE];
  unsigned int size = 0;
  const int ok = EVP_Digest(data.data(), data.size(), out, &size, EVP_sha256(), nullptr);
  ONEPASS_CHECK(ok == 1, "EVP_Digest(sha256) failed");
  return std::string(reinterpret_cast<const char*>(out), size);
}

std::string hmac_sha256(std::string_view key, std::string_view data) {
  unsigned char out[EVP_MAX_MD_SIZE];
  unsigned int size = 0;
  const unsigned char* result =
      HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()),
           reinterpret_cast<const unsigned char*>(data.data()), data.size(), out, &size);
  ONEPASS_CHECK(result != nullptr, "HMAC(sha256) failed");
  return std::string(reinterpret_cast<const char*>(out), size);
}

std::string hex(std::string_view bytes) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  out.reserve(bytes.size() * 2);
  for (const char c : bytes) {
    const auto byte = static_cast<unsigned char>(c);
    out += kDigits[byte >> 4];
    out += kDigits[byte & 0xf];
  }
  return out;
}

}  // namespace onepass::aws
