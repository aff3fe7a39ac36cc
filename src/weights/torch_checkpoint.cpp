#include "weights/torch_checkpoint.h"

#include <limits>
#include <map>

#include "base/error.h"
#include "weights/torch_pickle.h"
#include "weights/zip_archive.h"

namespace onepass::weights {
namespace {

constexpr std::uint64_t kMaxU64 = std::numeric_limits<std::uint64_t>::max();

[[noreturn]] void fail(std::string_view file_label, const std::string& problem) {
  throw Error(ErrorKind::kInvalidModel, std::string(file_label) + ": " + problem);
}

// The archive's folder: torch names it after the file ("pytorch_model/") or "archive/"; the one
// entry <folder>/data.pkl decides.
std::string archive_prefix(const std::vector<ZipEntry>& entries, std::string_view file_label) {
  std::string prefix;
  for (const auto& e : entries) {
    const auto slash = e.name.find('/');
    if (slash == std::string::npos || e.name.substr(slash) != "/data.pkl") continue;
    if (!prefix.empty()) fail(file_label, "checkpoint holds more than one data.pkl");
    prefix = e.name.substr(0, slash + 1);
  }
  if (prefix.empty()) {
    fail(file_label,
         "zip archive has no <archive>/data.pkl: not a PyTorch checkpoint (or truncated)");
  }
  return prefix;
}

std::string_view entry_text(std::span<const std::uint8_t> file, const ZipEntry& e) {
  return {reinterpret_cast<const char*>(file.data() + e.data_offset),
          static_cast<std::size_t>(e.size)};
}

}  // namespace

std::int64_t TorchTensor::numel() const {
  std::int64_t n = 1;
  for (const auto d : shape) n *= d;
  return n;
}

bool TorchTensor::contiguous() const {
  std::int64_t expected = 1;
  for (std::size_t k = shape.size(); k-- > 0;) {
    if (shape[k] != 1 && stride[k] != expected) return false;
    expected *= shape[k];
  }
  return true;
}

std::vector<TorchTensor> read_torch_checkpoint(std::span<const std::uint8_t> file,
                                               std::string_view file_label) {
  // The legacy format starts with a pickled magic number, not a zip local header.
  if (file.size() >= 2 && file[0] == 0x80 && file[1] == 0x02) {
    fail(file_label,
         "is a legacy (pre-PyTorch 1.6) checkpoint; re-save it with torch.save or convert it to "
         "model.safetensors");
  }
  const auto entries = read_zip_directory(file, file_label);
  const std::string prefix = archive_prefix(entries, file_label);
  std::map<std::string, const ZipEntry*> by_name;
  for (const auto& e : entries) by_name[e.name] = &e;

  if (const auto it = by_name.find(prefix + "byteorder"); it != by_name.end()) {
    if (entry_text(file, *it->second) != "little") {
      fail(file_label, "checkpoint is big-endian; onepass reads little-endian storages only");
    }
  }
  const ZipEntry& pickle = *by_name.at(prefix + "data.pkl");
  const auto state = parse_torch_pickle(file.subspan(pickle.data_offset, pickle.size), file_label);

  // Each storage against its entry: the bytes the persistent id promises must be there.
  std::vector<const ZipEntry*> storage_entries;
  for (const auto& s : state.storages) {
    const auto it = by_name.find(prefix + "data/" + s.key);
    if (it == by_name.end()) {
      fail(file_label, "storage key '" + s.key.substr(0, 40) + "' has no data/" +
                           s.key.substr(0, 40) + " entry in the archive");
    }
    const std::uint64_t elem = stored_dtype_bytes(s.dtype);
    if (s.numel > kMaxU64 / elem || it->second->size != s.numel * elem) {
      fail(file_label, "storage " + s.key.substr(0, 40) + " holds " +
                           std::to_string(it->second->size) + " bytes, not " +
                           std::to_string(s.numel) + " elements of " + stored_dtype_name(s.dtype));
    }
    storage_entries.push_back(it->second);
  }

  std::vector<TorchTensor> out;
  out.reserve(state.tensors.size());
  for (const auto& record : state.tensors) {
    const TorchStorageRef& storage = state.storages[record.storage];
    TorchTensor t;
    t.name = record.name;
    t.dtype = storage.dtype;
    t.shape = record.shape;
    t.stride = record.stride;
    // The last element's index in the storage, with overflow checks: a hostile size or stride
    // must not wrap around into range.
    // Every term and partial sum stays below 2^63.
    constexpr std::uint64_t kLimit = 1ull << 62;
    const auto implausible = [&] {
      fail(file_label, "tensor " + t.name.substr(0, 80) + " has an implausible size or stride");
    };
    bool empty = false;
    std::uint64_t last = record.storage_offset;
    std::uint64_t elements = 1;
    if (last > kLimit) implausible();
    for (std::size_t k = 0; k < t.shape.size(); ++k) {
      const auto size = static_cast<std::uint64_t>(t.shape[k]);
      const auto stride = static_cast<std::uint64_t>(t.stride[k]);
      if (size == 0) {
        empty = true;
        continue;
      }
      if (size > kLimit / elements) implausible();
      elements *= size;
      if (stride != 0 && size - 1 > kLimit / stride) implausible();
      last += (size - 1) * stride;
      if (last > kLimit) implausible();
    }
    if (!empty && last >= storage.numel) {
      fail(file_label, "tensor " + t.name.substr(0, 80) + " reaches element " +
                           std::to_string(last) + " of storage " + storage.key.substr(0, 40) +
                           ", which has " + std::to_string(storage.numel) + " elements");
    }
    const std::uint64_t elem = stored_dtype_bytes(storage.dtype);
    // An empty tensor's offset may sit at the end of its storage; it is never dereferenced.
    const std::uint64_t offset_bytes =
        empty ? 0 : record.storage_offset * elem;  // last < numel bounds it
    t.data_offset = storage_entries[record.storage]->data_offset + offset_bytes;
    out.push_back(std::move(t));
  }
  return out;
}

}  // namespace onepass::weights
