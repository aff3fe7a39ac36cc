// The central directory of a zip file whose entries are stored uncompressed, as torch.save writes
// its checkpoints (PyTorch's zip format since 1.6). Only the directory is parsed: entries are
// byte ranges of the file image, so tensors can be read in place from a memory map.
// read_zip_directory() is an untrusted-input boundary: every offset and size is checked against
// the file before it is returned.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace onepass::weights {

struct ZipEntry {
  std::string name;
  std::uint64_t data_offset = 0;  // absolute offset of the entry's bytes in the file
  std::uint64_t size = 0;         // bytes; data_offset + size <= file size
};

// Reads the end-of-central-directory record (zip64 too), the central directory and each entry's
// local header. Throws onepass::Error(kInvalidModel) naming `file_label` and the problem: not a
// zip file (truncated, no end record), a compressed or encrypted entry, an entry or directory
// pointing past the end of the file, a duplicate name.
std::vector<ZipEntry> read_zip_directory(std::span<const std::uint8_t> file,
                                         std::string_view file_label);

}  // namespace onepass::weights
