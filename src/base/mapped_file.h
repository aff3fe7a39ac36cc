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

  // Unmaps this process's resident pages of the file; the bytes stay readable (a later read
  // faults the page back in from the page cache, which keeps it). Called once a model has packed
  // its matrices, so the packed copies do not count twice in the resident set.
  void drop_resident_pages() const;
  // The same for the whole pages inside [begin, begin + length) of this mapping.
  void drop_resident_pages(const void* begin, std::size_t length) const;

 private:
  const std::uint8_t* data_ = nullptr;
  std::size_t size_ = 0;
};

}  // namespace onepass
