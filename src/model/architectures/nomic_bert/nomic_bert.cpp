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
//
// The whole ragged batch is one [total_tokens, hidden] matrix; nothing is padded. The remote code
// pads and masks, which is the same thing: a padded key's score gets the float minimum.
#include <cmath>
#include <span>
#include <string>
#include <vector>

#include "base/error.h"
#include "kernels/attention.h"
#include "kernels/elementwise.h"
#include "kernels/matmul.h"
#include "kernels/precision.h"
#include "model/architectures/architectures.h"
#include "model/architectures/nomic_bert/nomic_bert_config.h"
#include "model/batch_check.h"
#include "model/layers/bert_stack_pass.h"
#include "model/layers/encoder_heads.h"
#include "model/layers/post_attention.h"
#include "model/layers/rotary_table.h"
#include "tensor/arena.h"

namespace onepass::model {
namespace {

using kernels::Activation;
using weights::ModelConfig;
using weights::WeightStore;

// One NomicBertBlock's weights.
struct NomicBertLayer {
  kernels::Linear qkv;               // attn.Wqkv: [3 hidden, hidden]
  kernels::Linear attention_output;  // attn.out_proj
  LayerNormWeights norm1;
  kernels::Linear mlp_in;   // mlp.fc11 (gated) or mlp.fc1 with its activation fused
  kernels::Linear gate;     // mlp.fc12 with the gate's activation fused (gated only)
  kernels::Linear mlp_out;  // mlp.fc2
  LayerNormWeights norm2;
};

class NomicBertEncoder final : public Encoder {
 public:
  NomicBertEncoder(const NomicBertConfig& config, WeightStore store, const LoadOptions& options);
  const ModelInfo& info() const override { return info_; }
  void forward(std::span<const SequenceInput> batch, ForwardOutput& out) const override;

 private:
  void embed(std::span<const SequenceInput> batch, const std::size_t* offsets, float* x,
             tensor::ScratchArena& arena) const;
  // One layer on pass.x in place; gate: [tokens, intermediate] for the gated MLP; scaled: per
  // sequence its own rotary table (rotary_scaling_factor), or empty when every one uses rotary_.
  void layer_forward(const NomicBertLayer& layer, const BertStackPass& pass, float* gate,
                     std::span<const RotaryTable* const> scaled) const;

  WeightStore store_;  // owns the mapping every weight pointer below points into
  ModelInfo info_;
  int threads_ = 0;
  std::int64_t heads_ = 0;
  std::int64_t head_dim_ = 0;
  std::int64_t intermediate_size_ = 0;
  bool gated_mlp_ = false;
  bool bf16_attention_ = false;
  const float* word_embeddings_ = nullptr;        // [vocab_size, hidden]
  const float* token_type_embeddings_ = nullptr;  // [type_vocab_size, hidden] or null
  LayerNormWeights embedding_norm_;
  std::vector<NomicBertLayer> layers_;
  NomicBertRotary rotary_config_;
  RotaryTable rotary_;      // rotary_emb_base: every sequence that rotary_config_ does not scale
  kernels::Linear pooler_;  // bert.pooler.dense, tanh fused (sequence classification)
  kernels::Linear classifier_;  // classifier or qa_outputs: [num_labels, hidden]
  mutable tensor::ArenaPool arenas_;
};

NomicBertEncoder::NomicBertEncoder(const NomicBertConfig& config, WeightStore store,
                                   const LoadOptions& options)
    : store_(std::move(store)),
      threads_(options.threads),
      heads_(config.num_attention_heads),
      head_dim_(config.head_dim()),
      intermediate_size_(config.intermediate_size),
      gated_mlp_(config.gated_mlp),
      bf16_attention_(kernels::attention_precision(
                          options.precision, kernels::AttentionKind::kStandard, config.head_dim())
                          .bf16_scores),
      rotary_config_(config.rotary) {
  info_ = describe_checkpoint(config);
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
    NomicBertLayer& layer = layers_[static_cast<std::size_t>(i)];
    layer.qkv = linear(prefix + "attn.Wqkv", 3 * h, h, config.qkv_bias, identity);
    layer.attention_output = linear(prefix + "attn.out_proj", h, h, config.qkv_bias, identity);
    layer.norm1 = load_layer_norm(store_, prefix + "norm1", h, config.layer_norm_eps);
    if (config.gated_mlp) {
      layer.mlp_in = linear(prefix + "mlp.fc11", inter, h, config.fc1_bias, identity);
      layer.gate = linear(prefix + "mlp.fc12", inter, h, config.fc1_bias, config.mlp_activation);
    } else {
      layer.mlp_in = linear(prefix + "mlp.fc1", inter, h, config.fc1_bias, config.mlp_activation);
    }
    layer.mlp_out = linear(prefix + "mlp.fc2", h, inter, config.fc2_bias, identity);
    layer.norm2 = load_layer_norm(store_, prefix + "norm2", h, config.layer_norm_eps);
    store_.drop_resident_pages();  // this layer's matrices are packed: its file pages can go
  }
  rotary_ = RotaryTable(config.rotary.base, head_dim_, info_.max_tokens);

  if (info_.head == HeadKind::kSequenceClassification) {
    pooler_ = load_linear(store_, base + "pooler.dense", h, h, Activation::kTanh);
    classifier_ = load_linear(store_, "classifier", config.num_labels, h);
  } else if (task_model) {
    classifier_ = load_linear(store_, token_head_name(info_.head), config.num_labels, h);
  }
  info_.parameter_count = store_.parameter_count();
  store_.drop_resident_pages();  // every matrix is packed now
}

void NomicBertEncoder::embed(std::span<const SequenceInput> batch, const std::size_t* offsets,
                             float* x, tensor::ScratchArena& arena) const {
  const std::size_t tokens = offsets[batch.size()];
  auto* ids = arena.alloc_as<std::int32_t>(tokens);
  auto* types = arena.alloc_as<std::int32_t>(tokens);
  for (std::size_t s = 0; s < batch.size(); ++s) {
    const auto& seq = batch[s];
    for (std::size_t i = 0; i < seq.input_ids.size(); ++i) {
      ids[offsets[s] + i] = seq.input_ids[i];
      types[offsets[s] + i] = seq.token_type_ids.empty() ? 0 : seq.token_type_ids[i];
    }
  }
  const std::int64_t h = info_.hidden_size;
  const auto n = static_cast<std::int64_t>(tokens);
  kernels::embedding_gather(word_embeddings_, h, ids, n, x, false);
  if (token_type_embeddings_ != nullptr)
    kernels::embedding_gather(token_type_embeddings_, h, types, n, x, true);
  kernels::layer_norm(x, n, h, embedding_norm_.gamma, embedding_norm_.beta, embedding_norm_.eps);
}

void NomicBertEncoder::layer_forward(const NomicBertLayer& layer, const BertStackPass& pass,
                                     float* gate,
                                     std::span<const RotaryTable* const> scaled) const {
  const std::int64_t h = info_.hidden_size;
  const std::int64_t inter = intermediate_size_;
  const std::int64_t tokens = pass.tokens;
  const LayerScratch& scratch = pass.scratch;
  float* x = pass.x;
  layer.qkv.forward(x, tokens, scratch.qkv);
  if (scaled.empty()) {
    rotary_.rotate_queries_and_keys(scratch.qkv, 3 * h, heads_, pass.offsets, pass.num_seqs);
  } else {
    for (std::size_t s = 0; s < pass.num_seqs; ++s) {
      const std::size_t one[2] = {0, pass.offsets[s + 1] - pass.offsets[s]};
      scaled[s]->rotate_queries_and_keys(
          scratch.qkv + static_cast<std::int64_t>(pass.offsets[s]) * 3 * h, 3 * h, heads_, one, 1);
    }
  }
  kernels::AttentionShape shape;
  shape.num_heads = heads_;
  shape.head_dim = head_dim_;
  shape.ld_qkv = 3 * h;
  shape.bf16_products = bf16_attention_;
  const float scale = 1.0f / std::sqrt(static_cast<float>(head_dim_));
  kernels::self_attention(scratch.qkv, scratch.qkv + h, scratch.qkv + 2 * h, shape, pass.offsets,
                          pass.num_seqs, scale, scratch.context, scratch.attention);
  layer.attention_output.forward(scratch.context, tokens, x, /*accumulate=*/true);
  kernels::layer_norm(x, tokens, h, layer.norm1.gamma, layer.norm1.beta, layer.norm1.eps);

  layer.mlp_in.forward(x, tokens, scratch.intermediate);
  if (gated_mlp_) {
    layer.gate.forward(x, tokens, gate);
    kernels::multiply(scratch.intermediate, gate, tokens * inter);
  }
  layer.mlp_out.forward(scratch.intermediate, tokens, x, /*accumulate=*/true);
  kernels::layer_norm(x, tokens, h, layer.norm2.gamma, layer.norm2.beta, layer.norm2.eps);
}

void NomicBertEncoder::forward(std::span<const SequenceInput> batch, ForwardOutput& out) const {
  if (!begin_forward(batch, info_, out)) return;
  // BERT's pass: x and the qkv, context, intermediate and attention scratch from one arena.
  BertStackPass pass(threads_, arenas_, out, batch.size(), info_.hidden_size, intermediate_size_);
  float* gate = gated_mlp_ ? pass.arena->alloc(static_cast<std::size_t>(
                                 pass.tokens * static_cast<std::int64_t>(intermediate_size_)))
                           : nullptr;
  // With rotary_scaling_factor, each sequence past max_trained_positions rotates with a table
  // of its own base (NomicBertRotary::base_for), built for this pass.
  std::vector<RotaryTable> own_tables;
  std::vector<const RotaryTable*> scaled;
  for (std::size_t s = 0; s < pass.num_seqs; ++s) {
    const auto length = static_cast<std::int64_t>(pass.offsets[s + 1] - pass.offsets[s]);
    if (!rotary_config_.scales(length)) continue;
    if (scaled.empty()) {  // the first scaled sequence of the pass: nothing allocated before
      scaled.assign(pass.num_seqs, &rotary_);
      own_tables.reserve(pass.num_seqs);  // scaled points into it
    }
    own_tables.emplace_back(rotary_config_.base_for(length), head_dim_, length);
    scaled[s] = &own_tables.back();
  }
  embed(batch, pass.offsets, pass.x, *pass.arena);
  for (const auto& layer : layers_) layer_forward(layer, pass, gate, scaled);

  switch (info_.head) {
    case HeadKind::kBaseModel:
      out.hidden_states.assign(pass.x, pass.x + pass.tokens * pass.hidden);
      return;
    case HeadKind::kSequenceClassification:
      classify_sequences(pass.x, pass.offsets, pass.num_seqs, pass.hidden, pooler_, classifier_,
                         info_.num_labels, *pass.arena, out.logits);
      return;
    case HeadKind::kTokenClassification:
    case HeadKind::kQuestionAnswering:
      classify_tokens(pass.x, pass.tokens, classifier_, info_.num_labels, out.logits);
      return;
    case HeadKind::kMaskedLm:  // table.cpp gives NomicBERT none
      break;
  }
  ONEPASS_CHECK(false, "NomicBERT runs the heads its table line lists");
}

}  // namespace

const ArchitectureFamily kNomicBertFamily = {
    &read_nomic_bert_family_config,
    [](const ModelConfig& config, WeightStore store,
       const LoadOptions& options) -> std::unique_ptr<Encoder> {
      return std::make_unique<NomicBertEncoder>(nomic_bert_config(config), std::move(store),
                                                options);
    },
};

}  // namespace onepass::model
