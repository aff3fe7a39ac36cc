#include "model/layers/post_attention.h"

#include "kernels/activation.h"
#include "kernels/elementwise.h"

namespace onepass::model {

LayerNormWeights load_layer_norm(const weights::WeightStore& store, const std::string& prefix,
                                 std::int64_t dim, double eps) {
  return LayerNormWeights{store.get(prefix + ".weight", {dim}).data,
                          store.get(prefix + ".bias", {dim}).data, static_cast<float>(eps)};
}

kernels::Linear load_linear(const weights::WeightStore& store, const std::string& prefix,
                            std::int64_t out, std::int64_t in, kernels::Activation act) {
  return kernels::Linear(store.get(prefix + ".weight", {out, in}).data,
                         store.get(prefix + ".bias", {out}).data, out, in, act);
}

kernels::Linear load_linear(const weights::WeightStore& store, const std::string& prefix,
                            std::int64_t out, std::int64_t in, bool has_bias,
                            kernels::Activation act, kernels::Precision precision) {
  return kernels::Linear(store.get(prefix + ".weight", {out, in}).data,
                         has_bias ? store.get(prefix + ".bias", {out}).data : nullptr, out, in, act,
                         0, precision);
}

PostAttention::PostAttention(const weights::WeightStore& store, const std::string& prefix,
                             const weights::ModelConfig& config, kernels::Precision precision,
                             const PostAttentionNames& names)
    : hidden_(config.hidden_size) {
  const std::int64_t h = hidden_;
  const std::int64_t inter = config.intermediate_size;
  const auto identity = kernels::Activation::kIdentity;
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

void PostAttention::forward(const float* context, float* x, std::int64_t tokens,
                            float* intermediate) const {
  attention_output_.forward(context, tokens, x, /*accumulate=*/true);  // residual fused
  kernels::layer_norm(x, tokens, hidden_, attention_norm_.gamma, attention_norm_.beta,
                      attention_norm_.eps);
  intermediate_.forward(x, tokens, intermediate);
  output_.forward(intermediate, tokens, x, /*accumulate=*/true);
  kernels::layer_norm(x, tokens, hidden_, output_norm_.gamma, output_norm_.beta, output_norm_.eps);
}

}  // namespace onepass::model
