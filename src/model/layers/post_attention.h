// What follows self-attention in a post-LayerNorm encoder layer, the same in BERT, RoBERTa,
// XLM-R, DistilBERT, ELECTRA and DeBERTa-v2 (transformers' *SelfOutput + *Intermediate +
// *Output): x = LN(x + context·Woᵀ + bo); x = LN(x + act(x·Wiᵀ + bi)·Wdᵀ + bd). The weights are
// used in place from the mapping.
#pragma once

#include <cstdint>
#include <string>

#include "kernels/matmul.h"
#include "weights/config.h"
#include "weights/weight_store.h"

namespace onepass::model {

struct LayerNormWeights {
  const float* gamma = nullptr;
  const float* beta = nullptr;  // null: no bias (ModernBERT's norm_bias false)
  float eps = 1e-12f;
};

// Reads `<prefix>.weight` / `<prefix>.bias` of shape [dim].
LayerNormWeights load_layer_norm(const weights::WeightStore& store, const std::string& prefix,
                                 std::int64_t dim, double eps);

// An fp32 Linear over `<prefix>.weight` [out, in] and `<prefix>.bias` [out], `act` fused.
kernels::Linear load_linear(const weights::WeightStore& store, const std::string& prefix,
                            std::int64_t out, std::int64_t in,
                            kernels::Activation act = kernels::Activation::kIdentity);

// An encoder matrix in `precision`, `act` fused, whose config says whether it has a bias
// (ModernBERT's attention_bias and mlp_bias, NomicBERT's qkv_proj_bias and mlp_fc*_bias).
kernels::Linear load_linear(const weights::WeightStore& store, const std::string& prefix,
                            std::int64_t out, std::int64_t in, bool has_bias,
                            kernels::Activation act, kernels::Precision precision);

// Weight names inside one layer, after its prefix: BERT's (and DeBERTa-v2's) by default.
struct PostAttentionNames {
  const char* attention_output = "attention.output.dense";
  const char* attention_norm = "attention.output.LayerNorm";
  const char* intermediate = "intermediate.dense";
  const char* output = "output.dense";
  const char* output_norm = "output.LayerNorm";
};

class PostAttention {
 public:
  PostAttention() = default;
  // prefix: the layer's, e.g. "<base>encoder.layer.<i>.". Sizes, hidden_act and layer_norm_eps
  // from `config`. Throws kInvalidModel (missing / misshapen weights), kUnsupported (hidden_act).
  PostAttention(const weights::WeightStore& store, const std::string& prefix,
                const weights::ModelConfig& config, kernels::Precision precision,
                const PostAttentionNames& names = {});

  // context: attention's output [tokens, hidden]; x: the layer's input [tokens, hidden], updated
  // in place to the layer's output. intermediate: scratch [tokens, intermediate_size].
  void forward(const float* context, float* x, std::int64_t tokens, float* intermediate) const;

 private:
  std::int64_t hidden_ = 0;
  kernels::Linear attention_output_;
  LayerNormWeights attention_norm_;
  kernels::Linear intermediate_;  // activation fused into the product
  kernels::Linear output_;
  LayerNormWeights output_norm_;
};

}  // namespace onepass::model
