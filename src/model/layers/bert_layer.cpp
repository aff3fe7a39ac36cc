#include "model/layers/bert_layer.h"

#include <cmath>
#include <cstring>
#include <vector>

#include "kernels/attention.h"

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
  post_attention_ = PostAttention(store, prefix, config, precision, names.post_attention);
}

void BertLayer::forward(float* x, std::int64_t tokens, const std::size_t* offsets,
                        std::size_t num_seqs, const LayerScratch& scratch,
                        const kernels::DistanceBias& bias) const {
  const std::int64_t h = hidden_;
  const std::int64_t head_dim = h / heads_;
  qkv_.forward(x, tokens, scratch.qkv);
  const float scale = 1.0f / std::sqrt(static_cast<float>(head_dim));
  kernels::AttentionShape shape{heads_, head_dim, 3 * h, bf16_attention_};
  shape.distance_bias = bias;
  kernels::self_attention(scratch.qkv, scratch.qkv + h, scratch.qkv + 2 * h, shape, offsets,
                          num_seqs, scale, scratch.context, scratch.attention);
  post_attention_.forward(scratch.context, x, tokens, scratch.intermediate);
}

}  // namespace onepass::model
