// All float tensors of a model folder, by Hugging Face state_dict name, from model.safetensors or
// (when a repo ships only that) PyTorch's pytorch_model.bin, read without unpickling anything
// (torch_checkpoint.h). F32 tensors point straight into the memory-mapped file (no copy); F16/BF16
// and strided tensors are converted once at load into owned F32 buffers. Immutable after open(),
// so any number of threads may read it.
#pragma once

#include <cstdint>
#include <filesystem>
#include <initializer_list>
#include <memory>
#include <optional>
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

enum class WeightFormat { kSafetensors, kTorch };

const char* weight_file_name(WeightFormat format);  // "model.safetensors", "pytorch_model.bin"
const char* index_file_name(WeightFormat format);   // "<weight file>.index.json"

// The weight files a folder would be loaded from, found without reading them (the index, when
// sharded, is read for its shard names).
struct WeightFiles {
  WeightFormat format = WeightFormat::kSafetensors;
  std::string index;               // the index file name; empty when not sharded
  std::vector<std::string> files;  // file names in the folder
};

// In order of preference: model.safetensors, model.safetensors.index.json, pytorch_model.bin,
// pytorch_model.bin.index.json; nullopt when there is none. Throws kInvalidModel for a broken
// index.
std::optional<WeightFiles> find_weight_files(const std::filesystem::path& model_dir);

class WeightStore {
 public:
  // Opens the weight files find_weight_files() picks. Throws onepass::Error: kNotFound (no
  // weights, a missing shard), kInvalidModel (any safetensors or checkpoint check, e.g. a pickle
  // global outside the weights-only allow-list; a shard name that leaves the folder, a tensor
  // the index names but its shard lacks, NaN/Inf in a weight).
  static WeightStore open(const std::filesystem::path& model_dir);

  // Builds a store from one in-memory weight file image (tests, tools).
  static WeightStore from_mapped(MappedFile file, std::string_view file_label,
                                 WeightFormat format = WeightFormat::kSafetensors);

  bool contains(std::string_view name) const;
  // Throws kInvalidModel naming the tensor when it is missing, not a float dtype, or its shape
  // differs from `expected_shape` (config.json decides the shape, the file must agree).
  WeightView get(std::string_view name, std::initializer_list<std::int64_t> expected_shape) const;
  WeightView get(std::string_view name, const std::vector<std::int64_t>& expected_shape) const;
  // The stored shape and dtype of a tensor, whatever its dtype; throws kInvalidModel naming it
  // when it is missing.
  const std::vector<std::int64_t>& shape_of(std::string_view name) const;
  StoredDType dtype_of(std::string_view name) const;
  std::vector<std::string> names() const;
  std::int64_t parameter_count() const;  // float elements over all tensors
  // Renames every tensor whose name starts with `prefix` to the rest of its name, so that an
  // encoder nested in a larger model (GLiNER's token_rep_layer.bert_layer.model.) loads with a
  // base model's names; other tensors keep theirs.
  void strip_prefix(std::string_view prefix);

  // Drops the resident pages of the mapped files (contents unchanged, see MappedFile). A model
  // calls it after packing its matrices: only the tensors it still reads in place (embedding
  // rows actually looked up, norms, biases) come back into memory.
  void drop_resident_pages() const;

  WeightStore(WeightStore&&) noexcept = default;
  WeightStore& operator=(WeightStore&&) noexcept = default;
  ~WeightStore();

 private:
  WeightStore() = default;
  void add_file(MappedFile file, WeightFormat format, const std::string& file_label,
                const std::vector<std::string>* only_names);
  // `bytes` lies inside files_.back(); `stride` (elements) null when row-major contiguous.
  void add_entry(const std::string& name, StoredDType dtype, const std::vector<std::int64_t>& shape,
                 const std::uint8_t* bytes, const std::vector<std::int64_t>* stride,
                 const std::string& file_label);

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
