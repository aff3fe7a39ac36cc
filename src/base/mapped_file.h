// Read-only memory map of a whole file. Weights are served straight from the page cache, so a
// model loads without copying and every worker shares one physical copy.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <span>

namespace onepass {

class MappedFile {
 public:
  // Throws Error(kNotFound) when the file cannot be opened, kInvalidModel when it cannot be mapped.
  explicit MappedFile(const std::filesystem::path& path);
  ~MappedFile();
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;
  MappedFile(MappedFile&& other) noexcept;
  MappedFile& operator=(MappedFile&& other) noexcept;

  std::span<const std::uint8_t> bytes() const { return {data_, size_}; }
  std::size_t size() const { return size_; }

 private:
  const std::uint8_t* data_ = nullptr;
  std::size_t size_ = 0;
};

}  // namespace onepass
