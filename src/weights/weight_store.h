// All float tensors of a model folder, by Hugging Face state_dict name. F32 tensors point straight
// into the memory-mapped file (no copy); F16/BF16 are converted once at load into owned F32
// buffers. Immutable after open(), so any number of threads may read it.
#pragma once

#include <cstdint>
#include <filesystem>
#include <initializer_list>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "base/mapped_file.h"
#include "weights/safetensors.h"

namespace onepass::weights {

struct WeightView {
  const float* data = nullptr;
  std::vector<std::int64_t> shape;
  std::int64_t numel() const;
};

class WeightStore {
 public:
  // Opens DIR/model.safetensors, or the shards listed in DIR/model.safetensors.index.json.
  // Throws onepass::Error: kNotFound (no weights), kUnsupported (only pytorch_model.bin: pickle
  // runs code on load, so it is refused), kInvalidModel (any safetensors check, a shard name
  // that leaves the folder, a tensor the index names but its shard lacks, NaN/Inf in a weight).
  static WeightStore open(const std::filesystem::path& model_dir);

  // Builds a store from one in-memory safetensors image (tests, tools).
  static WeightStore from_mapped(MappedFile file, std::string_view file_label);

  bool contains(std::string_view name) const;
  // Throws kInvalidModel naming the tensor when it is missing, not a float dtype, or its shape
  // differs from `expected_shape` (config.json decides the shape, the file must agree).
  WeightView get(std::string_view name, std::initializer_list<std::int64_t> expected_shape) const;
  WeightView get(std::string_view name, const std::vector<std::int64_t>& expected_shape) const;
  std::vector<std::string> names() const;
  std::int64_t parameter_count() const;  // float elements over all tensors

  // Drops the resident pages of the mapped files (contents unchanged, see MappedFile). A model
  // calls it after packing its matrices: only the tensors it still reads in place (embedding
  // rows actually looked up, norms, biases) come back into memory.
  void drop_resident_pages() const;

  WeightStore(WeightStore&&) noexcept = default;
  WeightStore& operator=(WeightStore&&) noexcept = default;
  ~WeightStore();

 private:
  WeightStore() = default;
  void add_file(MappedFile file, const std::string& file_label,
                const std::vector<std::string>* only_names);

  struct Entry {
    StoredDType dtype = StoredDType::kF32;
    std::vector<std::int64_t> shape;
    const float* data = nullptr;  // null for non-float dtypes
  };
  std::vector<std::unique_ptr<MappedFile>> files_;
  std::vector<std::unique_ptr<float[]>> owned_;
  std::unordered_map<std::string, Entry> entries_;
};

}  // namespace onepass::weights
