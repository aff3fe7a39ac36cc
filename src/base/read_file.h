// Reading a whole file from a model folder or the Hub cache with a size bound. Every small file
// onepass reads from a folder it did not write (config.json, tokenizer files, weight indexes,
// Hub refs) goes through here, so a named pipe, a link to /dev/zero or a 100 GB "config.json"
// fails at once with a message naming the file and the limit instead of blocking a thread or
// growing the process until the kernel kills it. Large weight files are mapped (mapped_file.h),
// which applies the same regular-file check.
#pragma once

#include <cstddef>
#include <filesystem>
#include <optional>
#include <string>

namespace onepass {

// JSON settings: config.json, tokenizer_config.json, special_tokens_map.json, modules.json,
// weight indexes, Hub refs. The largest real ones (a config with tens of thousands of labels,
// the index of a many-shard checkpoint) are about 2 MiB.
inline constexpr std::size_t kSettingsFileLimitBytes = std::size_t{8} << 20;
// Tokenizer data: tokenizer.json, vocab.txt, vocab.json, merges.txt, SentencePiece models. The
// largest in common use (a 250k-entry tokenizer.json) are about 20 MiB.
inline constexpr std::size_t kTokenizerFileLimitBytes = std::size_t{64} << 20;

// The bytes of `path`, which must be a regular file once links are resolved and hold at most
// `limit_bytes`. Never blocks on a named pipe or a device. Throws Error kNotFound when it does
// not exist (or cannot be opened), kInvalidModel when it is not a regular file or is larger
// than the limit; messages name the file (not its folder) and the limit.
std::string read_file(const std::filesystem::path& path, std::size_t limit_bytes);

// The same, but nullopt when nothing exists at `path` (an optional file of a folder).
std::optional<std::string> read_file_if_present(const std::filesystem::path& path,
                                                std::size_t limit_bytes);

}  // namespace onepass
