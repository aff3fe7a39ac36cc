// The verdict cache of `--precision auto` (model/auto_precision.h): a start whose model, onepass
// version, CPU and check data match a saved verdict loads the chosen precision at once instead of
// running the gate (a load in each candidate precision and two passes over the check set).
//
// Key: the SHA-256 of the model folder's files that decide the gate's outcome (config.json, the
// weights, the tokenizer's files: top-level *.json, *.safetensors, *.bin, *.txt, *.model), the
// onepass version, what this CPU runs each precision's products and dispatched kernels on
// (cpu_signature) and the SHA-256 of --precision-check-data (empty without it). Hashing a 1.1 GB
// checkpoint takes about a second, so each file's digest is remembered under the cache folder by
// its path, size and modification time and read back while those still match (a file rewritten
// in place to the same size within the same nanosecond timestamp would be missed; a Hub cache
// never rewrites a blob). A file in a Hugging Face cache's blobs/ folder named by a SHA-256 (an
// LFS file, checked against that name at download) is not read at all: its name is its digest.
//
// Layout of the folder (--state-dir, else `onepass` beside the Hugging Face hub cache):
//   precision-verdicts/<key>.json   one verdict, with the key's parts for a reader
//   file-digests/<sha256 of path>   "size mtime_ns sha256" of one file
// Files are written to a temporary name and renamed, so servers sharing the folder never read a
// half-written file. A file that cannot be read back (corrupt, another format, another key) is a
// miss, reported, never an error; a folder that cannot be written is reported too.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

#include "model/auto_precision.h"

namespace onepass::runtime {

struct VerdictKey {
  std::string files_sha256;  // the model folder's files, as above
  std::string version;       // onepass's
  std::string cpu;           // cpu_signature()
  std::string check_data_sha256;
  std::string id() const;  // SHA-256 (hex) of the four: the file name
};

// "fp32=stream_gemm bf16=onednn int8=onednn_vnni isa=avx512_bf16": the kernels that compute each
// precision here, which decide its numbers.
std::string cpu_signature();

// Hex SHA-256 of a byte string and of a file's contents (kNotFound when it cannot be read).
std::string sha256_hex(std::string_view bytes);
std::string file_sha256_hex(const std::filesystem::path& file);

class VerdictCache {
 public:
  explicit VerdictCache(std::filesystem::path dir) : dir_(std::move(dir)) {}
  const std::filesystem::path& dir() const { return dir_; }

  // The key of `model_dir` now. Hashes what the file digests do not already hold, and remembers
  // them when `remember` and the folder can be written (a reader such as `onepass info` writes
  // nothing). Throws onepass::Error(kNotFound) for an unreadable file.
  VerdictKey key(const std::filesystem::path& model_dir, std::string_view check_data_sha256,
                 bool remember = true) const;

  // The saved verdict of `key`; nullopt when there is none or it cannot be used, with `problem`
  // saying why in the latter case (a corrupt file, a key that does not match its name).
  std::optional<model::PrecisionVerdict> find(const VerdictKey& key, std::string& problem) const;

  // Saves `verdict` under `key`; false with `problem` set when the folder cannot be written.
  bool store(const VerdictKey& key, const model::PrecisionVerdict& verdict,
             std::string& problem) const;

  std::filesystem::path verdict_path(const VerdictKey& key) const;

 private:
  std::string cached_file_sha256(const std::filesystem::path& file, bool remember) const;
  std::filesystem::path dir_;
};

}  // namespace onepass::runtime
