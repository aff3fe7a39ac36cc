#include "weights/weight_store.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "base/error.h"

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

std::string read_text(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

// model.safetensors.index.json: {"weight_map": {tensor name: shard file name}}.
std::map<std::string, std::vector<std::string>> read_index(const fs::path& path) {
  const auto j = nlohmann::json::parse(read_text(path), nullptr, false);
  if (j.is_discarded() || !j.is_object() || !j.contains("weight_map") ||
      !j["weight_map"].is_object()) {
    throw Error(ErrorKind::kInvalidModel, "model.safetensors.index.json has no weight_map object");
  }
  std::map<std::string, std::vector<std::string>> by_shard;
  for (const auto& [name, shard] : j["weight_map"].items()) {
    if (!shard.is_string()) {
      throw Error(ErrorKind::kInvalidModel,
                  "model.safetensors.index.json: shard of " + name + " is not a string");
    }
    const auto file = shard.get<std::string>();
    // A shard must be a plain file name in the folder: no path that could leave it.
    if (file.empty() || file.find('/') != std::string::npos ||
        file.find('\\') != std::string::npos || file == "." || file == "..") {
      throw Error(ErrorKind::kInvalidModel,
                  "model.safetensors.index.json names an invalid shard file");
    }
    by_shard[file].push_back(name);
  }
  return by_shard;
}

// Index of the first NaN/Inf in data[0, n), or n. Every load scans every float of the file, so
// blocks are checked with a branch-free exponent test the compiler vectorises, and only a block
// that holds a non-finite value is searched element by element.
std::size_t first_non_finite(const float* data, std::size_t n) {
  constexpr std::size_t kBlock = 4096;
  for (std::size_t begin = 0; begin < n; begin += kBlock) {
    const std::size_t end = std::min(n, begin + kBlock);
    std::uint32_t all_ones_exponent = 0;
    for (std::size_t i = begin; i < end; ++i) {
      std::uint32_t bits;
      std::memcpy(&bits, data + i, sizeof(bits));
      all_ones_exponent |= static_cast<std::uint32_t>((bits & 0x7f800000u) == 0x7f800000u);
    }
    if (all_ones_exponent == 0) continue;
    for (std::size_t i = begin; i < end; ++i) {
      if (!std::isfinite(data[i])) return i;
    }
  }
  return n;
}

}  // namespace

std::int64_t WeightView::numel() const {
  std::int64_t n = 1;
  for (const auto d : shape) n *= d;
  return n;
}

WeightStore::~WeightStore() = default;

void WeightStore::add_file(MappedFile file, const std::string& file_label,
                           const std::vector<std::string>* only_names) {
  const auto header = parse_safetensors_header(file.bytes(), file_label);
  files_.push_back(std::make_unique<MappedFile>(std::move(file)));
  const std::uint8_t* data = files_.back()->bytes().data() + header.data_offset;

  std::set<std::string> wanted;
  if (only_names) wanted.insert(only_names->begin(), only_names->end());
  for (const auto& t : header.tensors) {
    if (only_names && wanted.erase(t.name) == 0) continue;
    if (entries_.count(t.name)) {
      throw Error(ErrorKind::kInvalidModel, file_label + ": tensor " + t.name + " appears twice");
    }
    Entry entry;
    entry.dtype = t.dtype;
    entry.shape = t.shape;
    const std::uint8_t* bytes = data + t.begin;
    const auto n = static_cast<std::size_t>(t.numel());
    if (t.dtype == StoredDType::kF32 &&
        reinterpret_cast<std::uintptr_t>(bytes) % alignof(float) == 0) {
      entry.data = reinterpret_cast<const float*>(bytes);  // zero-copy from the mapping
    } else if (stored_dtype_is_float(t.dtype)) {
      auto owned = std::make_unique<float[]>(n == 0 ? 1 : n);
      for (std::size_t i = 0; i < n; ++i) {
        if (t.dtype == StoredDType::kF32) {
          std::memcpy(&owned[i], bytes + 4 * i, 4);  // unaligned F32 section
        } else {
          std::uint16_t h;
          std::memcpy(&h, bytes + 2 * i, 2);
          owned[i] = t.dtype == StoredDType::kF16 ? half_to_float(h) : bf16_to_float(h);
        }
      }
      entry.data = owned.get();
      owned_.push_back(std::move(owned));
    }
    if (entry.data) {
      if (const std::size_t bad = first_non_finite(entry.data, n); bad < n) {
        throw Error(ErrorKind::kInvalidModel, file_label + ": tensor " + t.name +
                                                  " contains NaN or Inf (element " +
                                                  std::to_string(bad) + ")");
      }
      // Scanned: drop the pages now, so loading never holds the whole file resident at once.
      files_.back()->drop_resident_pages(bytes, t.end - t.begin);
    }
    entries_.emplace(t.name, std::move(entry));
  }
  if (!wanted.empty()) {
    throw Error(ErrorKind::kInvalidModel, "model.safetensors.index.json lists tensor " +
                                              *wanted.begin() + " but " + file_label +
                                              " does not hold it");
  }
}

WeightStore WeightStore::from_mapped(MappedFile file, std::string_view file_label) {
  WeightStore store;
  store.add_file(std::move(file), std::string(file_label), nullptr);
  return store;
}

WeightStore WeightStore::open(const fs::path& model_dir) {
  WeightStore store;
  const auto single = model_dir / "model.safetensors";
  const auto index = model_dir / "model.safetensors.index.json";
  if (fs::is_regular_file(single)) {
    store.add_file(MappedFile(single), "model.safetensors", nullptr);
    return store;
  }
  if (fs::is_regular_file(index)) {
    for (const auto& [shard, names] : read_index(index)) {
      if (!fs::is_regular_file(model_dir / shard)) {
        throw Error(ErrorKind::kNotFound,
                    "shard " + shard + " listed in model.safetensors.index.json is missing");
      }
      store.add_file(MappedFile(model_dir / shard), shard, &names);
    }
    return store;
  }
  if (fs::exists(model_dir / "pytorch_model.bin") ||
      fs::exists(model_dir / "pytorch_model.bin.index.json")) {
    throw Error(ErrorKind::kUnsupported,
                "the model folder has only pytorch_model.bin, which onepass refuses to load "
                "(unpickling runs arbitrary code); convert it to model.safetensors");
  }
  throw Error(ErrorKind::kNotFound,
              "the model folder has no model.safetensors or model.safetensors.index.json");
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

void WeightStore::drop_resident_pages() const {
  for (const auto& file : files_) file->drop_resident_pages();
}

}  // namespace onepass::weights
