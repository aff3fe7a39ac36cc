#include "runtime/precision_verdicts.h"

#include <openssl/evp.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <system_error>
#include <vector>

#include "base/error.h"
#include "base/version.h"
#include "kernels/dispatch.h"
#include "kernels/matmul.h"

namespace onepass::runtime {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr int kFormat = 1;

class Sha256 {
 public:
  Sha256() : ctx_(EVP_MD_CTX_new(), &EVP_MD_CTX_free) {
    ONEPASS_CHECK(ctx_ && EVP_DigestInit_ex(ctx_.get(), EVP_sha256(), nullptr) == 1,
                  "libcrypto initialises SHA-256");
  }
  void update(const void* data, std::size_t size) {
    ONEPASS_CHECK(EVP_DigestUpdate(ctx_.get(), data, size) == 1, "libcrypto hashes");
  }
  std::string hex() {
    std::array<unsigned char, EVP_MAX_MD_SIZE> digest{};
    unsigned int size = 0;
    ONEPASS_CHECK(EVP_DigestFinal_ex(ctx_.get(), digest.data(), &size) == 1, "libcrypto hashes");
    static constexpr char kHex[] = "0123456789abcdef";
    std::string out;
    for (unsigned int i = 0; i < size; ++i) {
      out += kHex[digest[i] >> 4];
      out += kHex[digest[i] & 15];
    }
    return out;
  }

 private:
  std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)> ctx_;
};

bool is_hex64(const std::string& s) {
  return s.size() == 64 && std::all_of(s.begin(), s.end(), [](char c) {
           return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
         });
}

// The files whose bytes decide the gate: config.json, weights, tokenizer files.
bool hashed_file(const fs::path& path) {
  const std::string name = path.filename().string();
  if (name.empty() || name[0] == '.') return false;
  const std::string ext = path.extension().string();
  return ext == ".json" || ext == ".safetensors" || ext == ".bin" || ext == ".txt" ||
         ext == ".model";
}

// Writes `text` to `path` through a temporary file and a rename; false with `problem` set.
bool write_atomically(const fs::path& path, const std::string& text, std::string& problem) {
  std::error_code ec;
  fs::create_directories(path.parent_path(), ec);
  const fs::path tmp =
      path.parent_path() / (path.filename().string() + ".tmp." + std::to_string(::getpid()));
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out << text;
    out.close();
    if (!out) {
      problem = "cannot write in " + path.parent_path().string();
      fs::remove(tmp, ec);
      return false;
    }
  }
  fs::rename(tmp, path, ec);
  if (ec) {
    problem = "cannot rename into " + path.parent_path().string() + ": " + ec.message();
    fs::remove(tmp, ec);
    return false;
  }
  return true;
}

json gate_json(const model::GateResult& g) {
  return {{"precision", kernels::precision_name(g.precision)},
          {"pass", g.pass},
          {"unsupported", g.unsupported},
          {"reason", g.reason},
          {"examples", g.examples},
          {"label_agreement", g.label_agreement},
          {"max_share_shift", g.max_share_shift},
          {"min_cosine", g.min_cosine}};
}

model::GateResult gate_from_json(const json& j) {
  model::GateResult g;
  g.precision = kernels::precision_from_name(j.at("precision").get<std::string>());
  g.pass = j.at("pass").get<bool>();
  g.unsupported = j.at("unsupported").get<bool>();
  g.reason = j.at("reason").get<std::string>();
  g.examples = j.at("examples").get<std::size_t>();
  g.label_agreement = j.at("label_agreement").get<double>();
  g.max_share_shift = j.at("max_share_shift").get<double>();
  g.min_cosine = j.at("min_cosine").get<double>();
  return g;
}

}  // namespace

std::string sha256_hex(std::string_view bytes) {
  Sha256 h;
  h.update(bytes.data(), bytes.size());
  return h.hex();
}

std::string file_sha256_hex(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) throw Error(ErrorKind::kNotFound, file.filename().string() + " cannot be read");
  Sha256 h;
  std::vector<char> buffer(std::size_t{4} << 20);
  while (in) {
    in.read(buffer.data(), static_cast<std::streamsize>(buffer.size()));
    h.update(buffer.data(), static_cast<std::size_t>(in.gcount()));
  }
  if (in.bad()) throw Error(ErrorKind::kNotFound, file.filename().string() + " cannot be read");
  return h.hex();
}

std::string cpu_signature() {
  using kernels::Isa;
  const char* isa = "baseline";
  for (const Isa i : {Isa::kAvx512, Isa::kAvx512Bf16}) {
    if (kernels::cpu_supports(i)) isa = kernels::isa_name(i);
  }
  return std::string("fp32=") + kernels::fp32_linear_kernel() +
         " bf16=" + kernels::bf16_linear_kernel() + " int8=" + kernels::int8_linear_kernel() +
         " isa=" + isa;
}

std::string VerdictKey::id() const {
  return sha256_hex(files_sha256 + '\n' + version + '\n' + cpu + '\n' + check_data_sha256);
}

fs::path VerdictCache::verdict_path(const VerdictKey& key) const {
  return dir_ / "precision-verdicts" / (key.id() + ".json");
}

std::string VerdictCache::cached_file_sha256(const fs::path& file, bool remember) const {
  std::error_code ec;
  const fs::path canonical = fs::canonical(file, ec);
  const auto size = fs::file_size(file, ec);
  const auto mtime = fs::last_write_time(file, ec);
  if (ec) throw Error(ErrorKind::kNotFound, file.filename().string() + " cannot be read");
  // A Hugging Face cache stores a large (LFS) file as blobs/<its SHA-256>, which the download
  // checked (hub/resolve.cpp): a first start from the cache hashes nothing.
  if (canonical.parent_path().filename() == "blobs" && is_hex64(canonical.filename().string()))
    return canonical.filename().string();
  const std::string stamp =
      std::to_string(size) + ' ' + std::to_string(mtime.time_since_epoch().count());
  const fs::path memo = dir_ / "file-digests" / sha256_hex(canonical.string());
  {
    std::ifstream in(memo);
    std::string memo_size, memo_mtime, digest;
    if (in >> memo_size >> memo_mtime >> digest && memo_size + ' ' + memo_mtime == stamp &&
        is_hex64(digest))
      return digest;
  }
  const std::string digest = file_sha256_hex(file);
  std::string ignored;  // a folder we cannot write only costs the next start a rehash
  if (remember) write_atomically(memo, stamp + ' ' + digest + '\n', ignored);
  return digest;
}

VerdictKey VerdictCache::key(const fs::path& model_dir, std::string_view check_data_sha256,
                             bool remember) const {
  std::vector<fs::path> files;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(model_dir, ec)) {
    if (entry.is_regular_file(ec) && hashed_file(entry.path())) files.push_back(entry.path());
  }
  if (ec) throw Error(ErrorKind::kNotFound, "the model folder cannot be listed");
  std::sort(files.begin(), files.end());
  std::string listing;
  for (const auto& f : files)
    listing += f.filename().string() + ' ' + cached_file_sha256(f, remember) + '\n';
  VerdictKey key;
  key.files_sha256 = sha256_hex(listing);
  key.version = std::string(version());
  key.cpu = cpu_signature();
  key.check_data_sha256 = std::string(check_data_sha256);
  return key;
}

std::optional<model::PrecisionVerdict> VerdictCache::find(const VerdictKey& key,
                                                          std::string& problem) const {
  const fs::path path = verdict_path(key);
  std::ifstream in(path);
  if (!in) return std::nullopt;
  try {
    const json doc = json::parse(in);
    if (doc.at("format").get<int>() != kFormat) {
      problem = "format " + doc.at("format").dump() + " is not " + std::to_string(kFormat);
      return std::nullopt;
    }
    if (doc.at("files_sha256") != key.files_sha256 || doc.at("onepass_version") != key.version ||
        doc.at("cpu") != key.cpu || doc.at("check_data_sha256") != key.check_data_sha256) {
      problem = "its key does not match its name";
      return std::nullopt;
    }
    model::PrecisionVerdict verdict;
    verdict.chosen = kernels::precision_from_name(doc.at("chosen").get<std::string>());
    for (const auto& g : doc.at("gates")) verdict.gates.push_back(gate_from_json(g));
    // The chosen precision is the one gate that passed, or fp32 when none did.
    bool consistent = verdict.chosen == model::Precision::kFp32;
    for (const auto& g : verdict.gates) {
      if (g.pass) consistent = g.precision == verdict.chosen;
    }
    if (!consistent) {
      problem = "its chosen precision is not the one that passed";
      return std::nullopt;
    }
    return verdict;
  } catch (const json::exception& e) {
    problem = std::string("not a verdict: ") + e.what();
  } catch (const Error& e) {
    problem = std::string("not a verdict: ") + e.what();
  }
  return std::nullopt;
}

bool VerdictCache::store(const VerdictKey& key, const model::PrecisionVerdict& verdict,
                         std::string& problem) const {
  json gates = json::array();
  for (const auto& g : verdict.gates) gates.push_back(gate_json(g));
  const json doc{{"format", kFormat},
                 {"files_sha256", key.files_sha256},
                 {"onepass_version", key.version},
                 {"cpu", key.cpu},
                 {"check_data_sha256", key.check_data_sha256},
                 {"chosen", kernels::precision_name(verdict.chosen)},
                 {"gates", gates}};
  return write_atomically(verdict_path(key), doc.dump(2) + '\n', problem);
}

}  // namespace onepass::runtime
