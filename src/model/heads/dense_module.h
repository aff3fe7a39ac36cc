// sentence-transformers' Dense module (sentence_transformers.models.Dense): a Linear and an
// activation applied to the pooled sentence embedding, after Pooling and before Normalize.
// LaBSE and distiluse-base-multilingual-cased map 768 values onto 768 / 512 through tanh;
// stella_en_*_v5 onto 1024 (or another width) through identity. Its folder (modules.json's
// path, "2_Dense") holds config.json and the Linear's "linear.weight" [out, in] and
// "linear.bias" [out] in model.safetensors or, from older releases, pytorch_model.bin.
#pragma once

#include <filesystem>
#include <span>
#include <string>
#include <vector>

#include "model/heads/postprocess.h"

namespace onepass::model::heads {

struct DenseModuleConfig {
  std::string path;  // the module's folder inside the model folder, as modules.json names it
  int in_features = 0;
  int out_features = 0;
  bool bias = true;
  // tanh or identity, the ones published checkpoints use (runtime/sentence_transformers.cpp
  // refuses any other by name).
  Activation activation = Activation::kTanh;
};

class DenseModule {
 public:
  // Reads the Linear from `model_dir / config.path` (WeightStore's files and checks). Throws
  // onepass::Error naming the module's folder: kNotFound without weights, kInvalidModel for a
  // missing tensor or one whose shape is not the config's.
  static DenseModule load(const std::filesystem::path& model_dir, const DenseModuleConfig& config);

  const DenseModuleConfig& config() const { return config_; }

  // activation(weight · in + bias) for one vector of in_features values.
  std::vector<float> apply(std::span<const float> in) const;

 private:
  DenseModuleConfig config_;
  // Stored transposed, [in][out]: apply() then adds one scaled row per input value, a loop the
  // compiler vectorises without reordering any sum.
  std::vector<float> weight_in_out_;
  std::vector<float> bias_;  // empty without bias
};

}  // namespace onepass::model::heads
