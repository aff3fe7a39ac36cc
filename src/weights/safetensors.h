// safetensors: the Hugging Face weight format. An 8-byte little-endian header length, a JSON
// header {name: {dtype, shape, data_offsets: [begin, end)}, "__metadata__": {...}}, then the raw
// tensor bytes. parse_safetensors_header() is the untrusted-input boundary: it checks every
// number against the file before anything points into it, so later code never re-checks.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace onepass::weights {

// Every dtype safetensors defines; only kF32, kF16 and kBF16 can become model weights, the
// others (e.g. the I64 `position_ids` buffer old BERT checkpoints carry) are parsed and ignored.
enum class StoredDType {
  kBool,
  kU8,
  kI8,
  kI16,
  kU16,
  kF16,
  kBF16,
  kI32,
  kU32,
  kF32,
  kF64,
  kI64,
  kU64,
  kF8E4M3,
  kF8E5M2
};

std::size_t stored_dtype_bytes(StoredDType dtype);
const char* stored_dtype_name(StoredDType dtype);
bool stored_dtype_is_float(StoredDType dtype);  // F32, F16, BF16: loadable as float weights

struct StoredTensor {
  std::string name;
  StoredDType dtype = StoredDType::kF32;
  std::vector<std::int64_t> shape;
  std::uint64_t begin = 0;  // byte offsets relative to the start of the data section
  std::uint64_t end = 0;
  std::int64_t numel() const;
};

struct SafetensorsHeader {
  std::vector<StoredTensor> tensors;  // sorted by begin offset
  std::uint64_t data_offset = 0;      // absolute offset of the data section in the file
};

// Largest header accepted; the reference implementation refuses more than 100 MB too.
inline constexpr std::uint64_t kMaxSafetensorsHeaderBytes = 100ull << 20;

// Parses and bounds-checks a whole safetensors file image. Throws onepass::Error(kInvalidModel)
// naming `file_label` and the problem: short file, header size past the end, invalid JSON,
// unknown dtype, negative or overflowing shape, dtype x shape != byte count, offsets outside the
// data section or overlapping another tensor.
SafetensorsHeader parse_safetensors_header(std::span<const std::uint8_t> file,
                                           std::string_view file_label);

}  // namespace onepass::weights
