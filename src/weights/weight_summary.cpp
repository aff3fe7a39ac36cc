#include "weights/weight_summary.h"

#include "base/error.h"
#include "base/mapped_file.h"
#include "weights/safetensors.h"
#include "weights/torch_checkpoint.h"

namespace onepass::weights {
namespace {

void count(WeightSummary& summary, const std::string& name, StoredDType dtype,
           const std::vector<std::int64_t>& shape) {
  if (!stored_dtype_is_float(dtype)) return;
  std::int64_t n = 1;
  for (const auto d : shape) n *= d;
  summary.parameters_by_dtype[stored_dtype_name(dtype)] += n;
  summary.parameter_count += n;
  if (shape.size() == 2 && name.find("embeddings") == std::string::npos) {
    summary.matrix_parameters += n;
    summary.matrix_rows += shape[0];
  }
}

}  // namespace

WeightSummary summarize_weights(const std::filesystem::path& model_dir) {
  auto files = find_weight_files(model_dir);
  if (!files) {
    throw Error(ErrorKind::kNotFound,
                "the model folder has no model.safetensors, model.safetensors.index.json, "
                "pytorch_model.bin or pytorch_model.bin.index.json");
  }
  WeightSummary summary;
  summary.files = *files;
  for (const auto& file : files->files) {
    std::error_code ec;
    if (!std::filesystem::exists(model_dir / file, ec)) {
      throw Error(ErrorKind::kNotFound, "weight file " + file + " is missing");
    }
    const MappedFile mapped(model_dir / file);
    summary.file_bytes += mapped.size();
    if (files->format == WeightFormat::kTorch) {
      for (const auto& t : read_torch_checkpoint(mapped.bytes(), file)) {
        count(summary, t.name, t.dtype, t.shape);
      }
    } else {
      for (const auto& t : parse_safetensors_header(mapped.bytes(), file).tensors) {
        count(summary, t.name, t.dtype, t.shape);
      }
    }
  }
  return summary;
}

}  // namespace onepass::weights
