#include "weights/safetensors.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <limits>
#include <nlohmann/json.hpp>

#include "base/error.h"

namespace onepass::weights {
namespace {

using nlohmann::json;

struct DTypeInfo {
  const char* name;
  StoredDType dtype;
  std::size_t bytes;
};

constexpr std::array<DTypeInfo, 15> kDTypes{{
    {"BOOL", StoredDType::kBool, 1},
    {"U8", StoredDType::kU8, 1},
    {"I8", StoredDType::kI8, 1},
    {"I16", StoredDType::kI16, 2},
    {"U16", StoredDType::kU16, 2},
    {"F16", StoredDType::kF16, 2},
    {"BF16", StoredDType::kBF16, 2},
    {"I32", StoredDType::kI32, 4},
    {"U32", StoredDType::kU32, 4},
    {"F32", StoredDType::kF32, 4},
    {"F64", StoredDType::kF64, 8},
    {"I64", StoredDType::kI64, 8},
    {"U64", StoredDType::kU64, 8},
    {"F8_E4M3", StoredDType::kF8E4M3, 1},
    {"F8_E5M2", StoredDType::kF8E5M2, 1},
}};

[[noreturn]] void fail(std::string_view file_label, const std::string& problem) {
  throw Error(ErrorKind::kInvalidModel, std::string(file_label) + ": " + problem);
}

StoredDType parse_dtype(const json& value, std::string_view file_label, const std::string& name) {
  if (!value.is_string()) fail(file_label, "tensor " + name + " has no dtype string");
  const auto& text = value.get_ref<const std::string&>();
  for (const auto& info : kDTypes) {
    if (text == info.name) return info.dtype;
  }
  fail(file_label, "tensor " + name + " has unknown dtype " + text.substr(0, 32));
}

std::uint64_t parse_u64(const json& value) {
  if (value.is_number_unsigned()) return value.get<std::uint64_t>();
  if (value.is_number_integer() && value.get<std::int64_t>() >= 0) {
    return static_cast<std::uint64_t>(value.get<std::int64_t>());
  }
  return std::numeric_limits<std::uint64_t>::max();  // caller reports it as invalid
}

StoredTensor parse_entry(const std::string& name, const json& entry, std::uint64_t data_bytes,
                         std::string_view file_label) {
  if (!entry.is_object()) fail(file_label, "tensor " + name + " is not a JSON object");
  StoredTensor tensor;
  tensor.name = name;
  const auto dtype_it = entry.find("dtype");
  tensor.dtype = parse_dtype(dtype_it == entry.end() ? json() : *dtype_it, file_label, name);

  const auto shape_it = entry.find("shape");
  if (shape_it == entry.end() || !shape_it->is_array()) {
    fail(file_label, "tensor " + name + " has no shape array");
  }
  // Element count with overflow checks: a hostile header must not wrap the byte count.
  std::uint64_t elements = 1;
  for (const auto& dim : *shape_it) {
    const std::uint64_t d = parse_u64(dim);
    if (d > (1ull << 40)) fail(file_label, "tensor " + name + " has an invalid dimension");
    if (d != 0 && elements > std::numeric_limits<std::uint64_t>::max() / d) {
      fail(file_label, "tensor " + name + " has a shape that overflows");
    }
    elements *= d;
    tensor.shape.push_back(static_cast<std::int64_t>(d));
  }
  const std::uint64_t elem_bytes = stored_dtype_bytes(tensor.dtype);
  if (elements > std::numeric_limits<std::uint64_t>::max() / elem_bytes) {
    fail(file_label, "tensor " + name + " has a shape that overflows");
  }

  const auto offsets_it = entry.find("data_offsets");
  if (offsets_it == entry.end() || !offsets_it->is_array() || offsets_it->size() != 2) {
    fail(file_label, "tensor " + name + " has no [begin, end] data_offsets");
  }
  tensor.begin = parse_u64((*offsets_it)[0]);
  tensor.end = parse_u64((*offsets_it)[1]);
  if (tensor.begin > tensor.end || tensor.end > data_bytes) {
    fail(file_label, "tensor " + name + " has data_offsets outside the file (truncated file?)");
  }
  if (tensor.end - tensor.begin != elements * elem_bytes) {
    fail(file_label, "tensor " + name + " has " + std::to_string(tensor.end - tensor.begin) +
                         " bytes but its dtype and shape need " +
                         std::to_string(elements * elem_bytes));
  }
  return tensor;
}

}  // namespace

std::size_t stored_dtype_bytes(StoredDType dtype) {
  for (const auto& info : kDTypes) {
    if (info.dtype == dtype) return info.bytes;
  }
  return 1;
}

const char* stored_dtype_name(StoredDType dtype) {
  for (const auto& info : kDTypes) {
    if (info.dtype == dtype) return info.name;
  }
  return "?";
}

bool stored_dtype_is_float(StoredDType dtype) {
  return dtype == StoredDType::kF32 || dtype == StoredDType::kF16 || dtype == StoredDType::kBF16;
}

std::int64_t StoredTensor::numel() const {
  std::int64_t n = 1;
  for (const auto d : shape) n *= d;
  return n;
}

SafetensorsHeader parse_safetensors_header(std::span<const std::uint8_t> file,
                                           std::string_view file_label) {
  if (file.size() < 8) fail(file_label, "file is shorter than the 8-byte header size");
  std::uint64_t header_bytes = 0;
  for (int i = 7; i >= 0; --i)
    header_bytes = (header_bytes << 8) | file[static_cast<std::size_t>(i)];
  if (header_bytes > kMaxSafetensorsHeaderBytes)
    fail(file_label, "header size is implausibly large");
  if (header_bytes > file.size() - 8) fail(file_label, "header size runs past the end of the file");

  const auto* text = reinterpret_cast<const char*>(file.data() + 8);
  json header = json::parse(text, text + header_bytes, nullptr, /*allow_exceptions=*/false);
  if (header.is_discarded()) fail(file_label, "header is not valid JSON");
  if (!header.is_object()) fail(file_label, "header is not a JSON object");

  SafetensorsHeader result;
  result.data_offset = 8 + header_bytes;
  const std::uint64_t data_bytes = file.size() - result.data_offset;
  for (const auto& [name, entry] : header.items()) {
    if (name == "__metadata__") continue;
    result.tensors.push_back(parse_entry(name, entry, data_bytes, file_label));
  }

  std::sort(result.tensors.begin(), result.tensors.end(),
            [](const StoredTensor& a, const StoredTensor& b) {
              return a.begin != b.begin ? a.begin < b.begin : a.end < b.end;
            });
  for (std::size_t i = 1; i < result.tensors.size(); ++i) {
    const auto& prev = result.tensors[i - 1];
    const auto& cur = result.tensors[i];
    // Empty tensors occupy no bytes and may share an offset with a neighbour.
    if (cur.begin < prev.end && cur.begin != cur.end && prev.begin != prev.end) {
      fail(file_label,
           "tensors " + prev.name + " and " + cur.name + " have overlapping data_offsets");
    }
  }
  return result;
}

}  // namespace onepass::weights
