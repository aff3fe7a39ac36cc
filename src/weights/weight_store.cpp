#include "weights/weight_store.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <sstream>

#include "base/error.h"
#include "base/read_file.h"
#include "weights/finite_scan.h"
#include "weights/torch_checkpoint.h"

namespace onepass::weights {
namespace {

namespace fs = std::filesystem;

float half_to_float(std::uint16_t h) {
  const std::uint32_t sign = static_cast<std::uint32_t>(h & 0x8000u) << 16;
  const std::uint32_t exponent = (h >> 10) & 0x1fu;
  std::uint32_t mantissa = h & 0x3ffu;
  std::uint32_t bits;
  if (exponent == 0x1f) {
    bits = sign | 0x7f800000u | (mantissa << 13);  // Inf / NaN
  } else if (exponent != 0) {
    bits = sign | ((exponent + 112) << 23) | (mantissa << 13);
  } else if (mantissa == 0) {
    bits = sign;
  } else {
    // Subnormal half: normalise into a float exponent.
    int e = -1;
    do {
      ++e;
      mantissa <<= 1;
    } while ((mantissa & 0x400u) == 0);
    bits = sign | (static_cast<std::uint32_t>(112 - e) << 23) | ((mantissa & 0x3ffu) << 13);
  }
  float out;
  std::memcpy(&out, &bits, sizeof(out));
  return out;
}

float bf16_to_float(std::uint16_t h) {
  const std::uint32_t bits = static_cast<std::uint32_t>(h) << 16;
  float out;
  std::memcpy(&out, &bits, sizeof(out));
  return out;
}

std::string shape_text(const std::vector<std::int64_t>& shape) {
  std::string s = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (i) s += ", ";
    s += std::to_string(shape[i]);
  }
  return s + "]";
}

// model.safetensors.index.json / pytorch_model.bin.index.json:
// {"weight_map": {tensor name: shard file name}}.
std::map<std::string, std::vector<std::string>> read_index(const fs::path& path) {
  const std::string label = path.filename().string();
  const auto j = nlohmann::json::parse(read_file(path, kSettingsFileLimitBytes), nullptr, false);
  if (j.is_discarded() || !j.is_object() || !j.contains("weight_map") ||
      !j["weight_map"].is_object()) {
    throw Error(ErrorKind::kInvalidModel, label + " has no weight_map object");
  }
  std::map<std::string, std::vector<std::string>> by_shard;
  for (const auto& [name, shard] : j["weight_map"].items()) {
    if (!shard.is_string()) {
      throw Error(ErrorKind::kInvalidModel, label + ": shard of " + name + " is not a string");
    }
    const auto file = shard.get<std::string>();
    // A shard must be a plain file name in the folder: no path that could leave it.
    if (file.empty() || file.find('/') != std::string::npos ||
        file.find('\\') != std::string::npos || file == "." || file == "..") {
      throw Error(ErrorKind::kInvalidModel, label + " names an invalid shard file");
    }
    by_shard[file].push_back(name);
  }
  return by_shard;
}

// Converts one stored element to float (F32, F16 or BF16; `bytes` may be unaligned).
float element_to_float(const std::uint8_t* bytes, StoredDType dtype) {
  if (dtype == StoredDType::kF32) {
    float f;
    std::memcpy(&f, bytes, 4);
    return f;
  }
  std::uint16_t h;
  std::memcpy(&h, bytes, 2);
  return dtype == StoredDType::kF16 ? half_to_float(h) : bf16_to_float(h);
}

// Copies a strided tensor (strides in elements) into `out` in row-major order.
void gather_strided(const std::uint8_t* base, StoredDType dtype,
                    const std::vector<std::int64_t>& shape, const std::vector<std::int64_t>& stride,
                    float* out) {
  const std::size_t elem = stored_dtype_bytes(dtype);
  const std::size_t rank = shape.size();
  std::vector<std::int64_t> index(rank, 0);
  std::int64_t n = 1;
  for (const auto d : shape) n *= d;
  for (std::int64_t i = 0; i < n; ++i) {
    std::int64_t at = 0;
    for (std::size_t k = 0; k < rank; ++k) at += index[k] * stride[k];
    out[i] = element_to_float(base + static_cast<std::size_t>(at) * elem, dtype);
    for (std::size_t k = rank; k-- > 0;) {  // odometer increment, last dimension fastest
      if (++index[k] < shape[k]) break;
      index[k] = 0;
    }
  }
}

}  // namespace

std::int64_t WeightView::numel() const {
  std::int64_t n = 1;
  for (const auto d : shape) n *= d;
  return n;
}

WeightStore::~WeightStore() = default;

void WeightStore::add_entry(const std::string& name, StoredDType dtype,
                            const std::vector<std::int64_t>& shape, const std::uint8_t* bytes,
                            const std::vector<std::int64_t>* stride,
                            const std::string& file_label) {
  if (entries_.count(name)) {
    throw Error(ErrorKind::kInvalidModel, file_label + ": tensor " + name + " appears twice");
  }
  Entry entry;
  entry.dtype = dtype;
  entry.shape = shape;
  std::size_t n = 1;
  for (const auto d : shape) n *= static_cast<std::size_t>(d);
  if (stored_dtype_is_float(dtype)) {
    if (stride == nullptr && dtype == StoredDType::kF32 &&
        reinterpret_cast<std::uintptr_t>(bytes) % alignof(float) == 0) {
      entry.data = reinterpret_cast<const float*>(bytes);  // zero-copy from the mapping
    } else {
      auto owned = std::make_unique<float[]>(n == 0 ? 1 : n);
      if (stride != nullptr) {
        gather_strided(bytes, dtype, shape, *stride, owned.get());
      } else {
        const std::size_t elem = stored_dtype_bytes(dtype);
        for (std::size_t i = 0; i < n; ++i) owned[i] = element_to_float(bytes + elem * i, dtype);
      }
      entry.data = owned.get();
      owned_.push_back(std::move(owned));
    }
    if (const std::size_t bad = first_non_finite(entry.data, n); bad < n) {
      throw Error(ErrorKind::kInvalidModel, file_label + ": tensor " + name +
                                                " contains NaN or Inf (element " +
                                                std::to_string(bad) + ")");
    }
    // Scanned: drop the pages now, so loading never holds the whole file resident at once.
    if (stride == nullptr) files_.back()->drop_resident_pages(bytes, n * stored_dtype_bytes(dtype));
  }
  entries_.emplace(name, std::move(entry));
}

void WeightStore::add_file(MappedFile file, WeightFormat format, const std::string& file_label,
                           const std::vector<std::string>* only_names) {
  const bool torch = format == WeightFormat::kTorch;
  files_.push_back(std::make_unique<MappedFile>(std::move(file)));
  const auto bytes = files_.back()->bytes();

  std::set<std::string> wanted;
  if (only_names) wanted.insert(only_names->begin(), only_names->end());
  const auto take = [&](const std::string& name) { return !only_names || wanted.erase(name) != 0; };
  if (torch) {
    for (const auto& t : read_torch_checkpoint(bytes, file_label)) {
      if (!take(t.name)) continue;
      add_entry(t.name, t.dtype, t.shape, bytes.data() + t.data_offset,
                t.contiguous() ? nullptr : &t.stride, file_label);
    }
  } else {
    const auto header = parse_safetensors_header(bytes, file_label);
    const std::uint8_t* data = bytes.data() + header.data_offset;
    for (const auto& t : header.tensors) {
      if (!take(t.name)) continue;
      add_entry(t.name, t.dtype, t.shape, data + t.begin, nullptr, file_label);
    }
  }
  if (!wanted.empty()) {
    throw Error(ErrorKind::kInvalidModel, std::string(index_file_name(format)) + " lists tensor " +
                                              *wanted.begin() + " but " + file_label +
                                              " does not hold it");
  }
}

WeightStore WeightStore::from_mapped(MappedFile file, std::string_view file_label,
                                     WeightFormat format) {
  WeightStore store;
  store.add_file(std::move(file), format, std::string(file_label), nullptr);
  return store;
}

const char* weight_file_name(WeightFormat format) {
  return format == WeightFormat::kTorch ? "pytorch_model.bin" : "model.safetensors";
}

const char* index_file_name(WeightFormat format) {
  return format == WeightFormat::kTorch ? "pytorch_model.bin.index.json"
                                        : "model.safetensors.index.json";
}

std::optional<WeightFiles> find_weight_files(const fs::path& model_dir) {
  // safetensors first: a folder with both is read without touching the pickle. The first file
  // present is the one read: one that is not a regular file (a named pipe, a link to a device)
  // is refused when it is opened, never skipped for another.
  std::error_code ec;
  for (const auto format : {WeightFormat::kSafetensors, WeightFormat::kTorch}) {
    if (fs::exists(model_dir / weight_file_name(format), ec)) {
      return WeightFiles{format, "", {weight_file_name(format)}};
    }
    const auto index = model_dir / index_file_name(format);
    if (fs::exists(index, ec)) {
      WeightFiles files{format, index_file_name(format), {}};
      for (const auto& [shard, names] : read_index(index)) files.files.push_back(shard);
      return files;
    }
  }
  return std::nullopt;
}

WeightStore WeightStore::open(const fs::path& model_dir) {
  const auto found = find_weight_files(model_dir);
  if (!found) {
    throw Error(ErrorKind::kNotFound,
                "the model folder has no model.safetensors, model.safetensors.index.json, "
                "pytorch_model.bin or pytorch_model.bin.index.json");
  }
  WeightStore store;
  if (found->index.empty()) {
    const auto& file = found->files.front();
    store.add_file(MappedFile(model_dir / file), found->format, file, nullptr);
    return store;
  }
  for (const auto& [shard, names] : read_index(model_dir / found->index)) {
    std::error_code ec;
    if (!fs::exists(model_dir / shard, ec)) {
      throw Error(ErrorKind::kNotFound,
                  "shard " + shard + " listed in " + found->index + " is missing");
    }
    store.add_file(MappedFile(model_dir / shard), found->format, shard, &names);
  }
  return store;
}

bool WeightStore::contains(std::string_view name) const {
  return entries_.count(std::string(name)) != 0;
}

WeightView WeightStore::get(std::string_view name,
                            std::initializer_list<std::int64_t> expected_shape) const {
  return get(name, std::vector<std::int64_t>(expected_shape));
}

WeightView WeightStore::get(std::string_view name,
                            const std::vector<std::int64_t>& expected_shape) const {
  const auto it = entries_.find(std::string(name));
  if (it == entries_.end()) {
    throw Error(ErrorKind::kInvalidModel, "weights: tensor " + std::string(name) + " is missing");
  }
  const Entry& e = it->second;
  if (!e.data) {
    throw Error(ErrorKind::kInvalidModel, "weights: tensor " + std::string(name) + " has dtype " +
                                              stored_dtype_name(e.dtype) +
                                              ", expected F32, F16 or BF16");
  }
  if (e.shape != expected_shape) {
    throw Error(ErrorKind::kInvalidModel, "weights: tensor " + std::string(name) + " has shape " +
                                              shape_text(e.shape) + " but config.json implies " +
                                              shape_text(expected_shape));
  }
  return WeightView{e.data, e.shape};
}

const std::vector<std::int64_t>& WeightStore::shape_of(std::string_view name) const {
  const auto it = entries_.find(std::string(name));
  if (it == entries_.end()) {
    throw Error(ErrorKind::kInvalidModel, "weights: tensor " + std::string(name) + " is missing");
  }
  return it->second.shape;
}

StoredDType WeightStore::dtype_of(std::string_view name) const {
  shape_of(name);  // throws when missing
  return entries_.find(std::string(name))->second.dtype;
}

std::vector<std::string> WeightStore::names() const {
  std::vector<std::string> out;
  for (const auto& [name, entry] : entries_) out.push_back(name);
  std::sort(out.begin(), out.end());
  return out;
}

std::int64_t WeightStore::parameter_count() const {
  std::int64_t n = 0;
  for (const auto& [name, e] : entries_) {
    if (!e.data) continue;
    std::int64_t k = 1;
    for (const auto d : e.shape) k *= d;
    n += k;
  }
  return n;
}

void WeightStore::strip_prefix(std::string_view prefix) {
  std::vector<std::string> nested;
  for (const auto& [name, entry] : entries_)
    if (name.size() > prefix.size() && name.compare(0, prefix.size(), prefix) == 0)
      nested.push_back(name);
  for (const std::string& name : nested) {
    auto node = entries_.extract(name);
    node.key() = name.substr(prefix.size());
    entries_.insert(std::move(node));
  }
}

void WeightStore::drop_resident_pages() const {
  for (const auto& file : files_) file->drop_resident_pages();
}

}  // namespace onepass::weights
