// What a model folder's weight files hold, read from their headers only (the safetensors JSON
// header, the checkpoint's zip directory and pickle): no tensor data is touched, so describing
// a multi-gigabyte model costs milliseconds. For `onepass info`.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <string>

#include "weights/weight_store.h"

namespace onepass::weights {

struct WeightSummary {
  WeightFiles files;
  // Float elements by stored dtype name ("F32", "F16", "BF16"); integer buffers such as
  // position_ids are not parameters.
  std::map<std::string, std::int64_t> parameters_by_dtype;
  std::int64_t parameter_count = 0;
  // Rank-2 float tensors other than embedding tables: the nn.Linear weights a model packs
  // (kernels/matmul.h), and their output rows (one int8 scale each).
  std::int64_t matrix_parameters = 0;
  std::int64_t matrix_rows = 0;
  std::uint64_t file_bytes = 0;  // all weight files together
};

// Throws onepass::Error: kNotFound (no weight files, a missing shard), kInvalidModel (any header
// check of safetensors.h / torch_checkpoint.h).
WeightSummary summarize_weights(const std::filesystem::path& model_dir);

}  // namespace onepass::weights
