// GTE as Alibaba-NLP's remote code runs it (modeling.py of Alibaba-NLP/new-impl on the Hub, its
// eager attention on padded inputs), the encoder of gte-base-en-v1.5, gte-large-en-v1.5,
// gte-multilingual-base and gte-multilingual-reranker-base:
// - token embeddings plus token type embeddings (when type_vocab_size > 0), then LayerNorm; no
//   position table;
// - post-LayerNorm layers (NewLayer): packed qkv_proj, rotary positions on queries and keys (base
//   rope_theta; with NTK scaling the base times the factor and every frequency divided by
//   factor^(2 / head_dim), for every position), attention over the whole sequence, o_proj,
//   attn_ln of it plus the input; then the gated MLP: up_gate_proj's first half (up) times
//   act(its second half) (gate), down_proj, mlp_ln of it plus its input.
// The embeddings and layers are model/layers/rotary_layer.h's, which NomicBERT runs too.
// Heads: NewForSequenceClassification's BERT pooler (tanh(dense(first token))) and classifier,
// NewForTokenClassification's classifier and NewForQuestionAnswering's qa_outputs on every token,
// NewForMaskedLM's lm_head (dense, act, norm, decoder tied to the word embeddings). NewModel is
// built without the pooler (add_pooling_layer=False), so a base model has none here either.
#include <cmath>
#include <span>
#include <string>
#include <vector>

#include "base/error.h"
#include "kernels/activation.h"
#include "kernels/matmul.h"
#include "kernels/precision.h"
#include "model/architectures/architectures.h"
#include "model/architectures/gte/gte_config.h"
#include "model/batch_check.h"
#include "model/layers/bert_stack_pass.h"
#include "model/layers/encoder_base.h"
#include "model/layers/encoder_heads.h"
#include "model/layers/masked_lm_head.h"
#include "model/layers/post_attention.h"
#include "model/layers/rotary_layer.h"
#include "model/layers/rotary_table.h"
#include "tensor/arena.h"

namespace onepass::model {
namespace {

using kernels::Activation;
using weights::ModelConfig;
using weights::WeightStore;

class GteEncoder final : public EncoderBase {
 public:
  GteEncoder(const GteConfig& config, WeightStore store, const LoadOptions& options);
  void forward(std::span<const SequenceInput> batch, ForwardOutput& out) const override;

 private:
  RotaryLayerShape shape_;
  const float* word_embeddings_ = nullptr;        // [vocab_size, hidden]
  const float* token_type_embeddings_ = nullptr;  // [type_vocab_size, hidden] or null
  LayerNormWeights embedding_norm_;
  // NewLayer: attention.qkv_proj, attention.o_proj, attn_ln; mlp.up_gate_proj's halves (up,
  // then the gate), mlp.down_proj, mlp_ln.
  std::vector<RotaryLayer> layers_;
  RotaryTable rotary_;
};

GteEncoder::GteEncoder(const GteConfig& config, WeightStore store, const LoadOptions& options)
    : EncoderBase(config, std::move(store), options),
      shape_{config.num_attention_heads, config.head_dim(), config.intermediate_size,
             /*gated_mlp=*/true,
             kernels::attention_precision(options.precision, kernels::AttentionKind::kStandard,
                                          config.head_dim())
                 .bf16_scores} {
  const bool task_model = info_.head != HeadKind::kBaseModel;
  // Task models nest the encoder under "new."; NewModel is saved without a prefix.
  std::string base = "new.";
  if (!task_model && store_.contains("embeddings.word_embeddings.weight")) base.clear();

  const std::int64_t h = config.hidden_size;
  const std::int64_t inter = config.intermediate_size;
  const Activation act = kernels::activation_from_hf(config.hidden_act);
  const auto identity = Activation::kIdentity;

  word_embeddings_ =
      store_.get(base + "embeddings.word_embeddings.weight", {config.vocab_size, h}).data;
  if (config.type_vocab_size > 0) {
    token_type_embeddings_ =
        store_.get(base + "embeddings.token_type_embeddings.weight", {config.type_vocab_size, h})
            .data;
  }
  embedding_norm_ =
      load_layer_norm(store_, base + "embeddings.LayerNorm", h, config.layer_norm_eps);

  layers_.resize(static_cast<std::size_t>(config.num_hidden_layers));
  for (int i = 0; i < config.num_hidden_layers; ++i) {
    const std::string prefix = base + "encoder.layer." + std::to_string(i) + ".";
    RotaryLayer& layer = layers_[static_cast<std::size_t>(i)];
    layer.qkv = load_linear(store_, prefix + "attention.qkv_proj", 3 * h, h, true, identity,
                            options.precision);
    layer.attention_output =
        load_linear(store_, prefix + "attention.o_proj", h, h, true, identity, options.precision);
    layer.attention_norm = load_layer_norm(store_, prefix + "attn_ln", h, config.layer_norm_eps);
    const float* up_gate = store_.get(prefix + "mlp.up_gate_proj.weight", {2 * inter, h}).data;
    layer.mlp_in = kernels::Linear(up_gate, nullptr, inter, h, identity, 0, options.precision);
    layer.gate = kernels::Linear(up_gate + inter * h, nullptr, inter, h, act, 0, options.precision);
    layer.mlp_out =
        load_linear(store_, prefix + "mlp.down_proj", h, inter, true, identity, options.precision);
    layer.mlp_norm = load_layer_norm(store_, prefix + "mlp_ln", h, config.layer_norm_eps);
    store_.drop_resident_pages();  // this layer's matrices are packed: its file pages can go
  }
  // NTKScalingRotaryEmbedding: base rope_theta · f (a Python float product), every inverse
  // frequency divided by f^(2 / d) (a Python float power); f = 1 (no scaling) changes neither.
  const double f = config.ntk_factor;
  const auto d = static_cast<double>(shape_.head_dim);
  rotary_ =
      RotaryTable(config.rope_theta * f, shape_.head_dim, info_.max_tokens, std::pow(f, 2.0 / d));

  // NewForSequenceClassification: the pooler (tanh(dense(first token))), then classifier.
  HeadWeights head_weights;
  head_weights.sequence_dense = base + "pooler.dense";
  head_weights.masked_lm = [&] {
    return MaskedLmHead(
        store_, {"lm_head.dense", "lm_head.norm", "lm_head.decoder.weight", "lm_head.decoder.bias"},
        act, config.layer_norm_eps, word_embeddings_, config.vocab_size, h);
  };
  task_heads_ = EncoderHeads(store_, info_, head_weights);
  info_.parameter_count = store_.parameter_count();
  store_.drop_resident_pages();  // every matrix is packed now
}

void GteEncoder::forward(std::span<const SequenceInput> batch, ForwardOutput& out) const {
  if (!begin_forward(batch, info_, out)) return;
  // BERT's pass: x and the qkv, context, intermediate and attention scratch from one arena.
  BertStackPass pass(threads_, arenas_, out, batch.size(), info_.hidden_size, shape_.intermediate);
  float* gate = pass.arena->alloc(static_cast<std::size_t>(pass.tokens * shape_.intermediate));
  const RotaryTable* const rotary = &rotary_;
  embed_tokens_and_types(batch, pass.offsets, word_embeddings_, token_type_embeddings_,
                         embedding_norm_, pass.hidden, pass.x, *pass.arena);
  for (const auto& layer : layers_) layer.forward(pass, shape_, {&rotary, 1}, gate);

  task_heads_.forward(pass.x, pass.offsets, batch, *pass.arena, out);
}

}  // namespace

const ArchitectureFamily kGteFamily = {
    &read_gte_family_config,
    &load_family_encoder<GteEncoder, &gte_config>,
};

}  // namespace onepass::model
