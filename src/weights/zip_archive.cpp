#include "weights/zip_archive.h"

#include <set>

#include "base/error.h"

namespace onepass::weights {
namespace {

// Record signatures and fixed sizes from PKWARE's APPNOTE.TXT (sections 4.3.7, 4.3.12-4.3.16).
constexpr std::uint32_t kLocalHeaderSignature = 0x04034b50;
constexpr std::uint32_t kCentralHeaderSignature = 0x02014b50;
constexpr std::uint32_t kEndSignature = 0x06054b50;
constexpr std::uint32_t kZip64EndSignature = 0x06064b50;
constexpr std::uint32_t kZip64LocatorSignature = 0x07064b50;
constexpr std::uint64_t kLocalHeaderBytes = 30;
constexpr std::uint64_t kCentralHeaderBytes = 46;
constexpr std::uint64_t kEndBytes = 22;
constexpr std::uint64_t kZip64EndBytes = 56;
constexpr std::uint64_t kZip64LocatorBytes = 20;
constexpr std::uint16_t kZip64ExtraId = 0x0001;

// Reads little-endian integers at checked offsets of the file image.
class Reader {
 public:
  Reader(std::span<const std::uint8_t> file, std::string_view label) : file_(file), label_(label) {}

  [[noreturn]] void fail(const std::string& problem) const {
    throw Error(ErrorKind::kInvalidModel, std::string(label_) + ": " + problem);
  }
  void need(std::uint64_t offset, std::uint64_t bytes, const char* what) const {
    if (offset > file_.size() || bytes > file_.size() - offset) {
      fail(std::string(what) + " points past the end of the file (truncated zip?)");
    }
  }
  std::uint64_t uint(std::uint64_t offset, int bytes) const {
    std::uint64_t v = 0;
    for (int i = bytes - 1; i >= 0; --i) v = (v << 8) | file_[offset + static_cast<unsigned>(i)];
    return v;
  }
  std::uint64_t size() const { return file_.size(); }

 private:
  std::span<const std::uint8_t> file_;
  std::string_view label_;
};

struct Directory {
  std::uint64_t entries = 0;
  std::uint64_t offset = 0;
  std::uint64_t bytes = 0;
};

// The end record sits in the last 22 + 65535 (comment) bytes; the last signature found wins.
Directory find_directory(const Reader& r) {
  if (r.size() < kEndBytes) r.fail("file is too short to be a zip archive (truncated?)");
  const std::uint64_t lowest = r.size() > kEndBytes + 0xffff ? r.size() - kEndBytes - 0xffff : 0;
  std::uint64_t end = r.size() - kEndBytes;
  while (r.uint(end, 4) != kEndSignature) {
    if (end == lowest) r.fail("no zip end-of-central-directory record (not a zip, or truncated)");
    --end;
  }
  Directory dir{r.uint(end + 10, 2), r.uint(end + 16, 4), r.uint(end + 12, 4)};
  if (dir.entries != 0xffff && dir.offset != 0xffffffff && dir.bytes != 0xffffffff) return dir;

  // Zip64: a locator just before the end record points at the zip64 end record.
  if (end < kZip64LocatorBytes || r.uint(end - kZip64LocatorBytes, 4) != kZip64LocatorSignature) {
    r.fail("zip64 end-of-central-directory locator is missing");
  }
  const std::uint64_t end64 = r.uint(end - kZip64LocatorBytes + 8, 8);
  r.need(end64, kZip64EndBytes, "the zip64 end record");
  if (r.uint(end64, 4) != kZip64EndSignature) r.fail("zip64 end record has a bad signature");
  return Directory{r.uint(end64 + 32, 8), r.uint(end64 + 48, 8), r.uint(end64 + 40, 8)};
}

// Replaces the 0xffffffff placeholders of a central header by the zip64 extra field's values,
// which appear in this order and only for the fields that overflowed.
void apply_zip64_extra(const Reader& r, std::uint64_t extra, std::uint64_t extra_bytes,
                       std::uint64_t& size, std::uint64_t& compressed, std::uint64_t& local) {
  std::uint64_t at = extra;
  while (at + 4 <= extra + extra_bytes) {
    const auto id = r.uint(at, 2);
    const auto len = r.uint(at + 2, 2);
    if (at + 4 + len > extra + extra_bytes) r.fail("zip extra field runs past its header");
    if (id == kZip64ExtraId) {
      std::uint64_t field = at + 4;
      for (std::uint64_t* value : {&size, &compressed, &local}) {
        if (*value != 0xffffffff) continue;
        if (field + 8 > at + 4 + len) r.fail("zip64 extra field is too short");
        *value = r.uint(field, 8);
        field += 8;
      }
      return;
    }
    at += 4 + len;
  }
}

}  // namespace

std::vector<ZipEntry> read_zip_directory(std::span<const std::uint8_t> file,
                                         std::string_view file_label) {
  const Reader r(file, file_label);
  const Directory dir = find_directory(r);
  r.need(dir.offset, dir.bytes, "the zip central directory");
  // Every central header takes at least 46 bytes: a huge count cannot make us loop for long.
  if (dir.entries > dir.bytes / kCentralHeaderBytes) {
    r.fail("zip central directory is shorter than its entry count");
  }

  std::vector<ZipEntry> entries;
  std::set<std::string> names;
  std::uint64_t at = dir.offset;
  const std::uint64_t dir_end = dir.offset + dir.bytes;
  for (std::uint64_t i = 0; i < dir.entries; ++i) {
    if (kCentralHeaderBytes > dir_end - at) r.fail("zip central directory is truncated");
    if (r.uint(at, 4) != kCentralHeaderSignature) r.fail("zip central header has a bad signature");
    const auto flags = r.uint(at + 8, 2);
    const auto method = r.uint(at + 10, 2);
    std::uint64_t compressed = r.uint(at + 20, 4);
    std::uint64_t size = r.uint(at + 24, 4);
    const auto name_bytes = r.uint(at + 28, 2);
    const auto extra_bytes = r.uint(at + 30, 2);
    const auto comment_bytes = r.uint(at + 32, 2);
    std::uint64_t local = r.uint(at + 42, 4);
    const std::uint64_t record = kCentralHeaderBytes + name_bytes + extra_bytes + comment_bytes;
    if (record > dir_end - at) r.fail("zip central directory is truncated");

    ZipEntry entry;
    entry.name.assign(reinterpret_cast<const char*>(file.data() + at + kCentralHeaderBytes),
                      name_bytes);
    apply_zip64_extra(r, at + kCentralHeaderBytes + name_bytes, extra_bytes, size, compressed,
                      local);
    at += record;

    if (flags & 0x1) r.fail("zip entry " + entry.name.substr(0, 80) + " is encrypted");
    if (method != 0 || compressed != size) {
      r.fail("zip entry " + entry.name.substr(0, 80) +
             " is compressed; torch.save stores entries uncompressed");
    }
    r.need(local, kLocalHeaderBytes, ("zip entry " + entry.name.substr(0, 80)).c_str());
    if (r.uint(local, 4) != kLocalHeaderSignature) {
      r.fail("zip entry " + entry.name.substr(0, 80) + " has a bad local header");
    }
    // The local header's own name and extra lengths decide where the data starts (torch pads
    // the extra field so tensor data is 64-byte aligned).
    entry.data_offset = local + kLocalHeaderBytes + r.uint(local + 26, 2) + r.uint(local + 28, 2);
    entry.size = size;
    r.need(entry.data_offset, entry.size, ("zip entry " + entry.name.substr(0, 80)).c_str());
    if (!names.insert(entry.name).second) {
      r.fail("zip entry " + entry.name.substr(0, 80) + " appears twice");
    }
    entries.push_back(std::move(entry));
  }
  return entries;
}

}  // namespace onepass::weights
