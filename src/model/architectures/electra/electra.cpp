// ELECTRA as transformers v4.47.1 runs it (models/electra/modeling_electra.py): word, absolute
// position and token-type embeddings of embedding_size, LayerNorm, then embeddings_project
// (Linear embedding_size -> hidden_size) when the two sizes differ; BERT's post-LayerNorm
// layers under BERT's weight names (model/layers/bert_layer.h); no pooler. Heads:
//   ElectraForSequenceClassification: ElectraClassificationHead on the first token,
//     logits = out_proj(gelu(dense(h[0]))) (the activation is get_activation("gelu"), fixed,
//     whatever hidden_act says);
//   ElectraForTokenClassification: logits[t] = classifier(h[t]) for every token;
//   ElectraForMaskedLM (the generators, google/electra-*-generator): generator_predictions
//     (dense hidden -> embedding_size, gelu, LayerNorm) and generator_lm_head (tied to the word
//     embeddings, its own bias) through model/layers/masked_lm_head.h.
//
// The whole ragged batch is one [total_tokens, hidden] matrix; nothing is padded.
#include <string>
#include <vector>

#include "base/error.h"
#include "kernels/elementwise.h"
#include "kernels/matmul.h"
#include "model/architectures/architectures.h"
#include "model/architectures/electra/electra_config.h"
#include "model/batch_check.h"
#include "model/layers/bert_layer.h"
#include "model/layers/bert_stack_pass.h"
#include "model/layers/encoder_base.h"
#include "model/layers/encoder_heads.h"
#include "model/layers/masked_lm_head.h"
#include "model/precision_check.h"
#include "tensor/arena.h"

namespace onepass::model {
namespace {

using weights::ModelConfig;
using weights::WeightStore;

class ElectraEncoder final : public EncoderBase {
 public:
  ElectraEncoder(const ElectraConfig& config, WeightStore store, const LoadOptions& options);
  void forward(std::span<const SequenceInput> batch, ForwardOutput& out) const override;

 private:
  void embed(std::span<const SequenceInput> batch, const std::size_t* offsets, float* x,
             tensor::ScratchArena& arena) const;

  std::int64_t embedding_size_ = 0;
  std::int64_t intermediate_size_ = 0;
  const float* word_embeddings_ = nullptr;        // [vocab_size, embedding_size]
  const float* position_embeddings_ = nullptr;    // [max_position_embeddings, embedding_size]
  const float* token_type_embeddings_ = nullptr;  // [type_vocab_size, embedding_size] or null
  LayerNormWeights embedding_norm_;               // over embedding_size
  bool project_ = false;                          // embedding_size != hidden_size
  kernels::Linear embeddings_project_;            // [hidden, embedding_size]
  std::vector<BertLayer> layers_;
};

ElectraEncoder::ElectraEncoder(const ElectraConfig& config, WeightStore store,
                               const LoadOptions& options)
    : EncoderBase(config, std::move(store), options),
      embedding_size_(config.embedding_size),
      intermediate_size_(config.intermediate_size) {
  const bool sequence_head = info_.head == HeadKind::kSequenceClassification;
  const bool token_head = per_token_head(info_.head);
  if (config.position_embedding_type != "absolute") {
    throw Error(ErrorKind::kUnsupported, "position_embedding_type " +
                                             config.position_embedding_type +
                                             " is not supported (only absolute)");
  }
  // Heads nest the encoder under "electra."; ElectraModel is saved without a prefix, though
  // some checkpoints carry one anyway.
  std::string base = "electra.";
  if (!sequence_head && !token_head && store_.contains("embeddings.word_embeddings.weight"))
    base.clear();

  const std::int64_t h = config.hidden_size;
  const std::int64_t e = embedding_size_;

  word_embeddings_ =
      store_.get(base + "embeddings.word_embeddings.weight", {config.vocab_size, e}).data;
  position_embeddings_ =
      store_
          .get(base + "embeddings.position_embeddings.weight", {config.max_position_embeddings, e})
          .data;
  if (config.type_vocab_size > 0) {
    token_type_embeddings_ =
        store_.get(base + "embeddings.token_type_embeddings.weight", {config.type_vocab_size, e})
            .data;
  }
  embedding_norm_ =
      load_layer_norm(store_, base + "embeddings.LayerNorm", e, config.layer_norm_eps);
  // ElectraModel creates embeddings_project only when the sizes differ.
  project_ = e != h;
  if (project_) embeddings_project_ = load_linear(store_, base + "embeddings_project", h, e);
  layers_.reserve(static_cast<std::size_t>(config.num_hidden_layers));
  for (int i = 0; i < config.num_hidden_layers; ++i) {
    layers_.emplace_back(store_, base + "encoder.layer." + std::to_string(i) + ".", config,
                         options.precision);
    store_.drop_resident_pages();  // this layer's matrices are packed: its file pages can go
  }

  // ElectraClassificationHead: dense with GELU, then out_proj, on the first token.
  HeadWeights head_weights;
  head_weights.sequence_dense = "classifier.dense";
  head_weights.sequence_activation = kernels::Activation::kGeluErf;
  head_weights.sequence_out = "classifier.out_proj";
  head_weights.masked_lm = [&] {
    // ElectraGeneratorPredictions' activation is get_activation("gelu"), whatever hidden_act.
    return MaskedLmHead(store_,
                        {"generator_predictions.dense", "generator_predictions.LayerNorm",
                         "generator_lm_head.weight", "generator_lm_head.bias"},
                        kernels::Activation::kGeluErf, config.layer_norm_eps, word_embeddings_,
                        config.vocab_size, h, e);
  };
  task_heads_ = EncoderHeads(store_, info_, head_weights);
  info_.parameter_count = store_.parameter_count();
  store_.drop_resident_pages();  // every matrix is packed now
}

void ElectraEncoder::embed(std::span<const SequenceInput> batch, const std::size_t* offsets,
                           float* x, tensor::ScratchArena& arena) const {
  const std::size_t tokens = offsets[batch.size()];
  auto* ids = arena.alloc_as<std::int32_t>(tokens);
  auto* positions = arena.alloc_as<std::int32_t>(tokens);
  auto* types = arena.alloc_as<std::int32_t>(tokens);
  for (std::size_t s = 0; s < batch.size(); ++s) {
    const auto& seq = batch[s];
    for (std::size_t i = 0; i < seq.input_ids.size(); ++i) {
      ids[offsets[s] + i] = seq.input_ids[i];
      positions[offsets[s] + i] = static_cast<std::int32_t>(i);
      types[offsets[s] + i] = seq.token_type_ids.empty() ? 0 : seq.token_type_ids[i];
    }
  }
  const auto n = static_cast<std::int64_t>(tokens);
  // [tokens, embedding_size]: straight into x when no projection follows.
  float* rows = project_ ? arena.alloc(tokens * static_cast<std::size_t>(embedding_size_)) : x;
  kernels::embedding_gather(word_embeddings_, embedding_size_, ids, n, rows, false);
  kernels::embedding_gather(position_embeddings_, embedding_size_, positions, n, rows, true);
  if (token_type_embeddings_ != nullptr)
    kernels::embedding_gather(token_type_embeddings_, embedding_size_, types, n, rows, true);
  kernels::layer_norm(rows, n, embedding_size_, embedding_norm_.gamma, embedding_norm_.beta,
                      embedding_norm_.eps);
  if (project_) embeddings_project_.forward(rows, n, x);
}

void ElectraEncoder::forward(std::span<const SequenceInput> batch, ForwardOutput& out) const {
  if (!begin_forward(batch, info_, out)) return;
  BertStackPass pass(threads_, arenas_, out, batch.size(), info_.hidden_size, intermediate_size_);
  embed(batch, pass.offsets, pass.x, *pass.arena);
  pass.run(layers_);

  task_heads_.forward(pass.x, pass.offsets, batch, *pass.arena, out);
}

}  // namespace

const ArchitectureFamily kElectraFamily = {
    &read_electra_family_config,
    &load_family_encoder<ElectraEncoder, &electra_config>,
};

}  // namespace onepass::model
