// SHA-256 and HMAC-SHA256 through OpenSSL's libcrypto: the two primitives SigV4 is built from.
#pragma once

#include <string>
#include <string_view>

namespace onepass::aws {

// Raw 32-byte digests (as std::string bytes) and their lower-case hex form.
std::string sha256(std::string_view data);
std::string hmac_sha256(std::string_view key, std::string_view data);
std::string hex(std::string_view bytes);
inline std::string sha256_hex(std::string_view data) { return hex(sha256(data)); }

}  // namespace onepass::aws
