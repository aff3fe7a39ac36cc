#include "model/layers/bert_layer.h"

#include <cmath>
#include <cstring>
#include <vector>

#include "kernels/attention.h"
#include "kernels/elementwise.h"

namespace onepass::model {

LayerScratch LayerScratch::carve(tensor::ScratchArena& arena, const std::size_t* offsets,
                                 std::size_t num_seqs, std::int64_t hidden,
                                 std::int64_t intermediate_size) {
  const auto tokens = static_cast<std::size_t>(offsets[num_seqs]);
  LayerScratch scratch;
  scratch.qkv = arena.alloc(tokens * 3 * static_cast<std::size_t>(hidden));
  scratch.context = arena.alloc(tokens * static_cast<std::size_t>(hidden));
  scratch.intermediate = arena.alloc(tokens * static_cast<std::size_t>(intermediate_size));
  scratch.attention = arena.alloc(kernels::self_attention_scratch_floats(offsets, num_seqs));
  return scratch;
}

LayerNormWeights load_layer_norm(const weights::WeightStore& store, const std::string& prefix,
                                 std::int64_t dim, double eps) {
  return LayerNormWeights{store.get(prefix + ".weight", {dim}).data,
                          store.get(prefix + ".bias", {dim}).data, static_cast<float>(eps)};
}

BertLayer::BertLayer(const weights::WeightStore& store, const std::string& prefix,
                     const weights::ModelConfig& config, kernels::Precision precision,
                     const BertLayerNames& names)
    : hidden_(config.hidden_size),
      heads_(config.num_attention_heads),
      // One kernel for both products: bf16 when the policy takes both (kernels/precision.h).
      bf16_attention_(kernels::attention_precision(precision, kernels::AttentionKind::kStandard,
                                                   config.hidden_size / config.num_attention_heads)
                          .bf16_scores) {
  const std::int64_t h = hidden_;
  const std::int64_t inter = config.intermediate_size;
  // Query, key and value rows stacked into one [3 hidden, hidden] product; the Linear packs its
  // own copy, so this staging buffer ends with the constructor.
  std::vector<float> qkv_weight(static_cast<std::size_t>(3 * h * h));
  qkv_bias_ = std::make_unique<float[]>(3 * h);
  const char* parts[] = {names.query, names.key, names.value};
  for (int p = 0; p < 3; ++p) {
    const std::string base = prefix + parts[p];
    std::memcpy(qkv_weight.data() + p * h * h, store.get(base + ".weight", {h, h}).data,
                h * h * sizeof(float));
    std::memcpy(qkv_bias_.get() + p * h, store.get(base + ".bias", {h}).data, h * sizeof(float));
  }
  const auto identity = kernels::Activation::kIdentity;
  qkv_ = kernels::Linear(qkv_weight.data(), qkv_bias_.get(), 3 * h, h, identity, 0, precision);
  attention_output_ = kernels::Linear(
      store.get(prefix + names.attention_output + ".weight", {h, h}).data,
      store.get(prefix + names.attention_output + ".bias", {h}).data, h, h, identity, 0, precision);
  attention_norm_ = load_layer_norm(store, prefix + names.attention_norm, h, config.layer_norm_eps);
  intermediate_ =
      kernels::Linear(store.get(prefix + names.intermediate + ".weight", {inter, h}).data,
                      store.get(prefix + names.intermediate + ".bias", {inter}).data, inter, h,
                      kernels::activation_from_hf(config.hidden_act), 0, precision);
  output_ = kernels::Linear(store.get(prefix + names.output + ".weight", {h, inter}).data,
                            store.get(prefix + names.output + ".bias", {h}).data, h, inter,
                            identity, 0, precision);
  output_norm_ = load_layer_norm(store, prefix + names.output_norm, h, config.layer_norm_eps);
}

void BertLayer::forward(float* x, std::int64_t tokens, const std::size_t* offsets,
                        std::size_t num_seqs, const LayerScratch& scratch) const {
  const std::int64_t h = hidden_;
  const std::int64_t head_dim = h / heads_;
  qkv_.forward(x, tokens, scratch.qkv);
  const float scale = 1.0f / std::sqrt(static_cast<float>(head_dim));
  kernels::self_attention(scratch.qkv, scratch.qkv + h, scratch.qkv + 2 * h,
                          kernels::AttentionShape{heads_, head_dim, 3 * h, bf16_attention_},
                          offsets, num_seqs, scale, scratch.context, scratch.attention);
  attention_output_.forward(scratch.context, tokens, x, /*accumulate=*/true);  // residual fused
  kernels::layer_norm(x, tokens, h, attention_norm_.gamma, attention_norm_.beta,
                      attention_norm_.eps);
  intermediate_.forward(x, tokens, scratch.intermediate);
  output_.forward(scratch.intermediate, tokens, x, /*accumulate=*/true);
  kernels::layer_norm(x, tokens, h, output_norm_.gamma, output_norm_.beta, output_norm_.eps);
}

}  // namespace onepass::model
