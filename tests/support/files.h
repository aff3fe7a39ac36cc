// Whole files in and out: model folders that tests write or break, and what a command wrote.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace onepass::testing {

// The file's bytes; empty when it cannot be read.
std::string read_text(const std::filesystem::path& path);

// Replaces the file's contents with `text` (or `bytes`), byte for byte.
void write_text(const std::filesystem::path& path, const std::string& text);
void write_file(const std::filesystem::path& path, const std::vector<std::uint8_t>& bytes);

}  // namespace onepass::testing
