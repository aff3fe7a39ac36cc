// ModernBERT as transformers v4.48 runs it on CPU (models/modernbert/modeling_modernbert.py, the
// eager attention path), the encoder of answerdotai/ModernBERT-* and of the embedding and
// reranking models built on it (gte-modernbert, modernbert-embed, gte-reranker-modernbert):
// - token embeddings, LayerNorm; no position table, no token types;
// - pre-LayerNorm layers (the first without one before attention): fused Wqkv, rotary positions
//   on queries and keys (model/layers/rotary_table.h; theta global_rope_theta,
//   local_rope_theta on local layers), attention over the whole sequence on every
//   global_attn_every_n_layers-th layer and over keys within local_attention / 2 of the query on
//   the others (only that band is computed, kernels/attention.h), Wo added to the residual;
//   then LayerNorm, Wi into input and gate halves, act(input) · gate, Wo added to the residual;
// - a final LayerNorm.
// Heads: ModernBertPredictionHead (dense, activation, LayerNorm) then the classifier, on the
// first token or the mean of the tokens (classifier_pooling) for sequence classification and on
// every token for token classification; ModernBertForMaskedLM's is the same head then the decoder
// to the vocabulary (tied to the token embeddings), model/layers/masked_lm_head.h.
//
// The whole ragged batch is one [total_tokens, hidden] matrix; nothing is padded. transformers
// pads and masks, which is the same thing: a padded key's score is the float minimum, its weight
// 0.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "base/error.h"
#include "kernels/attention.h"
#include "kernels/elementwise.h"
#include "kernels/matmul.h"
#include "kernels/precision.h"
#include "model/architectures/architectures.h"
#include "model/architectures/modernbert/modernbert_config.h"
#include "model/batch_check.h"
#include "model/layers/encoder_base.h"
#include "model/layers/encoder_heads.h"
#include "model/layers/masked_lm_head.h"
#include "model/layers/post_attention.h"
#include "model/layers/rotary_table.h"
#include "model/layers/thread_scope.h"
#include "tensor/arena.h"

namespace onepass::model {
namespace {

using kernels::Activation;
using weights::ModelConfig;
using weights::WeightStore;

// One ModernBertEncoderLayer's weights.
struct ModernBertLayer {
  LayerNormWeights attention_norm;  // gamma null: the first layer's Identity
  kernels::Linear qkv;              // Wqkv: [3 hidden, hidden]
  kernels::Linear attention_output;
  LayerNormWeights mlp_norm;
  // Wi [2 intermediate, hidden] is the input half then the gate half: two Linears over its two
  // halves, the activation fused into the input's, so that act(input) · gate is one pass.
  kernels::Linear mlp_input;  // Wi rows [0, intermediate), the activation fused
  kernels::Linear mlp_gate;   // Wi rows [intermediate, 2 intermediate)
  kernels::Linear mlp_out;    // Wo: [hidden, intermediate]
  bool global = true;
};

// Activations of one forward pass, token-major, carved once from the pass's arena.
struct ModernBertScratch {
  float* normed = nullptr;        // [tokens, hidden]: a LayerNorm's output
  float* qkv = nullptr;           // [tokens, 3 hidden]
  float* context = nullptr;       // [tokens, hidden]
  float* gate = nullptr;          // [tokens, intermediate]: the gate half of Wi
  float* intermediate = nullptr;  // [tokens, intermediate]
  float* attention = nullptr;     // kernels::self_attention_scratch_floats
};

class ModernBertEncoder final : public EncoderBase {
 public:
  ModernBertEncoder(const ModernBertConfig& config, WeightStore store, const LoadOptions& options);
  void forward(std::span<const SequenceInput> batch, ForwardOutput& out) const override;

 private:
  // out = LayerNorm(x) (x unchanged): the pre-LayerNorm layers keep x as the residual stream.
  void normalize(const float* x, std::int64_t tokens, const LayerNormWeights& norm,
                 float* out) const;
  void layer_forward(const ModernBertLayer& layer, float* x, std::int64_t tokens,
                     const std::size_t* offsets, std::size_t num_seqs,
                     const ModernBertScratch& scratch) const;
  // The prediction head (dense, activation, LayerNorm) on rows [rows, hidden], in place.
  void prediction_head(float* rows, std::int64_t count, float* scratch) const;
  // Each sequence's first token or mean of its tokens (classifier_pooling) into pooled.
  void pool_sequences(const float* x, const std::size_t* offsets, std::size_t num_seqs,
                      float* pooled) const;

  std::int64_t heads_ = 0;
  std::int64_t head_dim_ = 0;
  std::int64_t intermediate_size_ = 0;
  bool bf16_attention_ = false;
  bool mean_pooling_ = false;
  const float* token_embeddings_ = nullptr;  // [vocab_size, hidden]
  LayerNormWeights embedding_norm_;
  std::vector<ModernBertLayer> layers_;
  LayerNormWeights final_norm_;
  RotaryTable global_rotary_;
  RotaryTable local_rotary_;
  // How far a local layer's query sees: keys within local_attention / 2 of it (transformers'
  // sliding_window_mask gives the others the float minimum).
  std::int64_t local_reach_ = 0;
  kernels::Linear head_dense_;  // ModernBertPredictionHead.dense, its activation fused
  LayerNormWeights head_norm_;
  kernels::Linear classifier_;  // [num_labels, hidden]
  MaskedLmHead masked_lm_;      // ModernBertForMaskedLM: head, then decoder
};

ModernBertEncoder::ModernBertEncoder(const ModernBertConfig& config, WeightStore store,
                                     const LoadOptions& options)
    : EncoderBase(config, std::move(store), options),
      heads_(config.num_attention_heads),
      head_dim_(config.head_dim()),
      intermediate_size_(config.intermediate_size),
      bf16_attention_(kernels::attention_precision(
                          options.precision, kernels::AttentionKind::kStandard, config.head_dim())
                          .bf16_scores),
      mean_pooling_(config.classifier_pooling == "mean") {
  const bool task_model = info_.head != HeadKind::kBaseModel;
  // Task models nest the encoder under "model."; ModernBertModel is saved without a prefix.
  std::string base = "model.";
  if (!task_model && store_.contains("embeddings.tok_embeddings.weight")) base.clear();

  const std::int64_t h = config.hidden_size;
  const std::int64_t inter = config.intermediate_size;
  const auto eps = static_cast<float>(config.layer_norm_eps);
  auto norm = [&](const std::string& prefix) {
    return LayerNormWeights{store_.get(prefix + ".weight", {h}).data,
                            config.norm_bias ? store_.get(prefix + ".bias", {h}).data : nullptr,
                            eps};
  };

  token_embeddings_ =
      store_.get(base + "embeddings.tok_embeddings.weight", {config.vocab_size, h}).data;
  embedding_norm_ = norm(base + "embeddings.norm");

  const auto identity = Activation::kIdentity;
  const Activation mlp_act = kernels::activation_from_hf(config.hidden_act);
  layers_.resize(static_cast<std::size_t>(config.num_hidden_layers));
  for (int i = 0; i < config.num_hidden_layers; ++i) {
    const std::string prefix = base + "layers." + std::to_string(i) + ".";
    ModernBertLayer& layer = layers_[static_cast<std::size_t>(i)];
    if (i != 0) layer.attention_norm = norm(prefix + "attn_norm");
    layer.qkv = load_linear(store_, prefix + "attn.Wqkv", 3 * h, h, config.attention_bias, identity,
                            options.precision);
    layer.attention_output = load_linear(store_, prefix + "attn.Wo", h, h, config.attention_bias,
                                         identity, options.precision);
    layer.mlp_norm = norm(prefix + "mlp_norm");
    const float* wi = store_.get(prefix + "mlp.Wi.weight", {2 * inter, h}).data;
    const float* wi_bias =
        config.mlp_bias ? store_.get(prefix + "mlp.Wi.bias", {2 * inter}).data : nullptr;
    layer.mlp_input = kernels::Linear(wi, wi_bias, inter, h, mlp_act, 0, options.precision);
    layer.mlp_gate = kernels::Linear(wi + inter * h, wi_bias != nullptr ? wi_bias + inter : nullptr,
                                     inter, h, identity, 0, options.precision);
    layer.mlp_out = load_linear(store_, prefix + "mlp.Wo", h, inter, config.mlp_bias, identity,
                                options.precision);
    layer.global = config.global_layer(i);
    store_.drop_resident_pages();  // this layer's matrices are packed: its file pages can go
  }
  final_norm_ = norm(base + "final_norm");

  const std::int64_t longest = info_.max_tokens;
  global_rotary_ = RotaryTable(config.global_rope_theta, head_dim_, longest);
  local_rotary_ = RotaryTable(config.local_rope_theta, head_dim_, longest);
  local_reach_ = config.local_attention / 2;

  if (info_.head == HeadKind::kMaskedLm) {
    masked_lm_ = MaskedLmHead(
        store_,
        {"head.dense", "head.norm", "decoder.weight",
         config.decoder_bias ? "decoder.bias" : nullptr, config.classifier_bias, config.norm_bias},
        kernels::activation_from_hf(config.classifier_activation), config.layer_norm_eps,
        token_embeddings_, config.vocab_size, h);
  } else if (task_model) {
    head_dense_ = load_linear(store_, "head.dense", h, h, config.classifier_bias,
                              kernels::activation_from_hf(config.classifier_activation),
                              kernels::Precision::kFp32);
    head_norm_ = norm("head.norm");
    classifier_ = load_linear(store_, "classifier", config.num_labels, h);
  }
  info_.parameter_count = store_.parameter_count();
  store_.drop_resident_pages();  // every matrix is packed now
}

void ModernBertEncoder::normalize(const float* x, std::int64_t tokens, const LayerNormWeights& norm,
                                  float* out) const {
  std::copy(x, x + tokens * info_.hidden_size, out);
  kernels::layer_norm(out, tokens, info_.hidden_size, norm.gamma, norm.beta, norm.eps);
}

void ModernBertEncoder::layer_forward(const ModernBertLayer& layer, float* x, std::int64_t tokens,
                                      const std::size_t* offsets, std::size_t num_seqs,
                                      const ModernBertScratch& scratch) const {
  const std::int64_t h = info_.hidden_size;
  const std::int64_t inter = intermediate_size_;
  const float* attention_input = x;
  if (layer.attention_norm.gamma != nullptr) {
    normalize(x, tokens, layer.attention_norm, scratch.normed);
    attention_input = scratch.normed;
  }
  layer.qkv.forward(attention_input, tokens, scratch.qkv);
  (layer.global ? global_rotary_ : local_rotary_)
      .rotate_queries_and_keys(scratch.qkv, 3 * h, heads_, offsets, num_seqs);
  kernels::AttentionShape shape;
  shape.num_heads = heads_;
  shape.head_dim = head_dim_;
  shape.ld_qkv = 3 * h;
  shape.bf16_products = bf16_attention_;
  if (!layer.global) shape.window = local_reach_;
  const float scale = 1.0f / std::sqrt(static_cast<float>(head_dim_));
  kernels::self_attention(scratch.qkv, scratch.qkv + h, scratch.qkv + 2 * h, shape, offsets,
                          num_seqs, scale, scratch.context, scratch.attention);
  layer.attention_output.forward(scratch.context, tokens, x, /*accumulate=*/true);

  normalize(x, tokens, layer.mlp_norm, scratch.normed);
  layer.mlp_input.forward(scratch.normed, tokens, scratch.intermediate);
  layer.mlp_gate.forward(scratch.normed, tokens, scratch.gate);
  kernels::multiply(scratch.intermediate, scratch.gate, tokens * inter);
  layer.mlp_out.forward(scratch.intermediate, tokens, x, /*accumulate=*/true);
}

void ModernBertEncoder::prediction_head(float* rows, std::int64_t count, float* scratch) const {
  head_dense_.forward(rows, count, scratch);
  kernels::layer_norm(scratch, count, info_.hidden_size, head_norm_.gamma, head_norm_.beta,
                      head_norm_.eps);
  std::copy(scratch, scratch + count * info_.hidden_size, rows);
}

void ModernBertEncoder::pool_sequences(const float* x, const std::size_t* offsets,
                                       std::size_t num_seqs, float* pooled) const {
  const std::int64_t h = info_.hidden_size;
  if (!mean_pooling_) {
    gather_first_tokens(x, offsets, num_seqs, h, pooled);
    return;
  }
  // transformers: (h · mask).sum(1) / mask.sum(1), the sum in token order.
  for (std::size_t s = 0; s < num_seqs; ++s) {
    float* out = pooled + static_cast<std::int64_t>(s) * h;
    std::fill(out, out + h, 0.0f);
    for (std::size_t t = offsets[s]; t < offsets[s + 1]; ++t) {
      const float* row = x + static_cast<std::int64_t>(t) * h;
      for (std::int64_t c = 0; c < h; ++c) out[c] += row[c];
    }
    const auto count = static_cast<float>(offsets[s + 1] - offsets[s]);
    for (std::int64_t c = 0; c < h; ++c) out[c] /= count;
  }
}

void ModernBertEncoder::forward(std::span<const SequenceInput> batch, ForwardOutput& out) const {
  if (!begin_forward(batch, info_, out)) return;
  ThreadScope thread_scope(threads_);
  auto arena = arenas_.acquire();
  const std::size_t* offsets = out.token_offsets.data();
  const std::size_t num_seqs = batch.size();
  const auto tokens = static_cast<std::int64_t>(offsets[num_seqs]);
  const std::int64_t h = info_.hidden_size;
  const auto n = static_cast<std::size_t>(tokens);
  const auto hidden = static_cast<std::size_t>(h);
  const auto inter = static_cast<std::size_t>(intermediate_size_);

  float* x = arena->alloc(n * hidden);
  ModernBertScratch scratch;
  scratch.normed = arena->alloc(n * hidden);
  scratch.qkv = arena->alloc(n * 3 * hidden);
  scratch.context = arena->alloc(n * hidden);
  scratch.gate = arena->alloc(n * inter);
  scratch.intermediate = arena->alloc(n * inter);
  scratch.attention = arena->alloc(kernels::self_attention_scratch_floats(offsets, num_seqs));

  auto* ids = arena->alloc_as<std::int32_t>(n);
  for (std::size_t s = 0; s < num_seqs; ++s) {
    std::copy(batch[s].input_ids.begin(), batch[s].input_ids.end(), ids + offsets[s]);
  }
  kernels::embedding_gather(token_embeddings_, h, ids, tokens, x, false);
  kernels::layer_norm(x, tokens, h, embedding_norm_.gamma, embedding_norm_.beta,
                      embedding_norm_.eps);
  for (const auto& layer : layers_) layer_forward(layer, x, tokens, offsets, num_seqs, scratch);
  kernels::layer_norm(x, tokens, h, final_norm_.gamma, final_norm_.beta, final_norm_.eps);

  switch (info_.head) {
    case HeadKind::kBaseModel:
      out.hidden_states.assign(x, x + tokens * h);
      return;
    case HeadKind::kTokenClassification:
      prediction_head(x, tokens, scratch.normed);
      classify_tokens(x, tokens, classifier_, info_.num_labels, out.logits);
      return;
    case HeadKind::kSequenceClassification: {
      float* pooled = arena->alloc(num_seqs * hidden);
      float* head_scratch = arena->alloc(num_seqs * hidden);
      pool_sequences(x, offsets, num_seqs, pooled);
      prediction_head(pooled, static_cast<std::int64_t>(num_seqs), head_scratch);
      out.logits.resize(num_seqs * static_cast<std::size_t>(info_.num_labels));
      classifier_.forward(pooled, static_cast<std::int64_t>(num_seqs), out.logits.data());
      return;
    }
    case HeadKind::kMaskedLm:
      masked_lm_.forward(x, offsets, batch, *arena, out);
      return;
    case HeadKind::kQuestionAnswering:  // table.cpp gives ModernBERT none
    case HeadKind::kSpanExtraction:     // GLiNER's head is its own encoder's (gliner/)
      break;
  }
  ONEPASS_CHECK(false, "ModernBERT runs the heads its table line lists");
}

}  // namespace

const ArchitectureFamily kModernBertFamily = {
    &read_modernbert_family_config,
    &load_family_encoder<ModernBertEncoder, &modernbert_config>,
};

}  // namespace onepass::model
