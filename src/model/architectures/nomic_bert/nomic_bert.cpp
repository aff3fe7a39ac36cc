// NomicBERT as nomic-ai's remote code runs it (modeling_hf_nomic_bert.py on the Hub, the path
// without flash attention), the encoder of nomic-embed-text-v1 / v1.5 and nomic-bert-2048:
// - token embeddings plus token type embeddings, then LayerNorm (emb_ln); no position table;
// - post-LayerNorm layers: fused Wqkv, rotary positions on queries and keys
//   (model/layers/rotary_table.h, base rotary_emb_base; with rotary_scaling_factor, a sequence
//   past max_trained_positions gets its own NTK-scaled base), attention over the whole sequence,
//   out_proj, LayerNorm (norm1) of it plus the input; then the MLP, fc11(x) · act(fc12(x))
//   (swiglu: SiLU, geglu: GELU) or GELU(fc1(x)), fc2, LayerNorm (norm2) of it plus its input.
// Heads: NomicBertForSequenceClassification's BERT pooler (tanh(dense(first token))) and
// classifier, NomicBertForTokenClassification's classifier and NomicBertForQuestionAnswering's
// qa_outputs on every token. NomicBertModel's from_pretrained builds it without the pooler, so a
// base model has none here either, whatever the file holds.
// The embeddings and layers are model/layers/rotary_layer.h's, which GTE runs too.
#include <span>
#include <string>
#include <vector>

#include "base/error.h"
#include "kernels/matmul.h"
#include "kernels/precision.h"
#include "model/architectures/architectures.h"
#include "model/architectures/nomic_bert/nomic_bert_config.h"
#include "model/batch_check.h"
#include "model/layers/bert_stack_pass.h"
#include "model/layers/encoder_base.h"
#include "model/layers/encoder_heads.h"
#include "model/layers/post_attention.h"
#include "model/layers/rotary_layer.h"
#include "model/layers/rotary_table.h"
#include "tensor/arena.h"

namespace onepass::model {
namespace {

using kernels::Activation;
using weights::ModelConfig;
using weights::WeightStore;

class NomicBertEncoder final : public EncoderBase {
 public:
  NomicBertEncoder(const NomicBertConfig& config, WeightStore store, const LoadOptions& options);
  void forward(std::span<const SequenceInput> batch, ForwardOutput& out) const override;

 private:
  RotaryLayerShape shape_;
  const float* word_embeddings_ = nullptr;        // [vocab_size, hidden]
  const float* token_type_embeddings_ = nullptr;  // [type_vocab_size, hidden] or null
  LayerNormWeights embedding_norm_;
  // NomicBertBlock: attn.Wqkv, attn.out_proj, norm1; mlp.fc11 (gated; fc1 plain), mlp.fc12 (the
  // gate), mlp.fc2, norm2.
  std::vector<RotaryLayer> layers_;
  NomicBertRotary rotary_config_;
  RotaryTable rotary_;  // rotary_emb_base: every sequence that rotary_config_ does not scale
};

NomicBertEncoder::NomicBertEncoder(const NomicBertConfig& config, WeightStore store,
                                   const LoadOptions& options)
    : EncoderBase(config, std::move(store), options),
      shape_{config.num_attention_heads, config.head_dim(), config.intermediate_size,
             config.gated_mlp,
             kernels::attention_precision(options.precision, kernels::AttentionKind::kStandard,
                                          config.head_dim())
                 .bf16_scores},
      rotary_config_(config.rotary) {
  const bool task_model = info_.head != HeadKind::kBaseModel;
  // Task models nest the encoder under "bert."; NomicBertModel is saved without a prefix.
  std::string base = "bert.";
  if (!task_model && store_.contains("embeddings.word_embeddings.weight")) base.clear();

  const std::int64_t h = config.hidden_size;
  const std::int64_t inter = config.intermediate_size;
  auto linear = [&](const std::string& prefix, std::int64_t out, std::int64_t in, bool bias,
                    Activation act) {
    return load_linear(store_, prefix, out, in, bias, act, options.precision);
  };

  word_embeddings_ =
      store_.get(base + "embeddings.word_embeddings.weight", {config.vocab_size, h}).data;
  if (config.type_vocab_size > 0) {
    token_type_embeddings_ =
        store_.get(base + "embeddings.token_type_embeddings.weight", {config.type_vocab_size, h})
            .data;
  }
  embedding_norm_ = load_layer_norm(store_, base + "emb_ln", h, config.layer_norm_eps);

  const auto identity = Activation::kIdentity;
  layers_.resize(static_cast<std::size_t>(config.num_hidden_layers));
  for (int i = 0; i < config.num_hidden_layers; ++i) {
    const std::string prefix = base + "encoder.layers." + std::to_string(i) + ".";
    RotaryLayer& layer = layers_[static_cast<std::size_t>(i)];
    layer.qkv = linear(prefix + "attn.Wqkv", 3 * h, h, config.qkv_bias, identity);
    layer.attention_output = linear(prefix + "attn.out_proj", h, h, config.qkv_bias, identity);
    layer.attention_norm = load_layer_norm(store_, prefix + "norm1", h, config.layer_norm_eps);
    if (config.gated_mlp) {
      layer.mlp_in = linear(prefix + "mlp.fc11", inter, h, config.fc1_bias, identity);
      layer.gate = linear(prefix + "mlp.fc12", inter, h, config.fc1_bias, config.mlp_activation);
    } else {
      layer.mlp_in = linear(prefix + "mlp.fc1", inter, h, config.fc1_bias, config.mlp_activation);
    }
    layer.mlp_out = linear(prefix + "mlp.fc2", h, inter, config.fc2_bias, identity);
    layer.mlp_norm = load_layer_norm(store_, prefix + "norm2", h, config.layer_norm_eps);
    store_.drop_resident_pages();  // this layer's matrices are packed: its file pages can go
  }
  rotary_ = RotaryTable(config.rotary.base, shape_.head_dim, info_.max_tokens);

  // NomicBertForSequenceClassification: the pooler (tanh(dense(first token))), then
  // classifier. table.cpp gives NomicBERT no masked-LM head.
  HeadWeights head_weights;
  head_weights.sequence_dense = base + "pooler.dense";
  task_heads_ = EncoderHeads(store_, info_, head_weights);
  info_.parameter_count = store_.parameter_count();
  store_.drop_resident_pages();  // every matrix is packed now
}

void NomicBertEncoder::forward(std::span<const SequenceInput> batch, ForwardOutput& out) const {
  if (!begin_forward(batch, info_, out)) return;
  // BERT's pass: x and the qkv, context, intermediate and attention scratch from one arena.
  BertStackPass pass(threads_, arenas_, out, batch.size(), info_.hidden_size, shape_.intermediate);
  float* gate = shape_.gated_mlp
                    ? pass.arena->alloc(static_cast<std::size_t>(pass.tokens * shape_.intermediate))
                    : nullptr;
  // With rotary_scaling_factor, each sequence past max_trained_positions rotates with a table
  // of its own base (NomicBertRotary::base_for), built for this pass.
  const RotaryTable* const every = &rotary_;
  std::span<const RotaryTable* const> rotary(&every, 1);
  std::vector<RotaryTable> own_tables;
  std::vector<const RotaryTable*> per_sequence;
  for (std::size_t s = 0; s < pass.num_seqs; ++s) {
    const auto length = static_cast<std::int64_t>(pass.offsets[s + 1] - pass.offsets[s]);
    if (!rotary_config_.scales(length)) continue;
    if (per_sequence.empty()) {  // the first scaled sequence of the pass: nothing allocated before
      per_sequence.assign(pass.num_seqs, &rotary_);
      own_tables.reserve(pass.num_seqs);  // per_sequence points into it
    }
    own_tables.emplace_back(rotary_config_.base_for(length), shape_.head_dim, length);
    per_sequence[s] = &own_tables.back();
  }
  if (!per_sequence.empty()) rotary = per_sequence;
  embed_tokens_and_types(batch, pass.offsets, word_embeddings_, token_type_embeddings_,
                         embedding_norm_, pass.hidden, pass.x, *pass.arena);
  for (const auto& layer : layers_) layer.forward(pass, shape_, rotary, gate);

  task_heads_.forward(pass.x, pass.offsets, batch, *pass.arena, out);
}

}  // namespace

const ArchitectureFamily kNomicBertFamily = {
    &read_nomic_bert_family_config,
    &load_family_encoder<NomicBertEncoder, &nomic_bert_config>,
};

}  // namespace onepass::model
