// DistilBERT as transformers v4.47.1 runs it (models/distilbert/modeling_distilbert.py):
// word + absolute position embeddings (no token types), LayerNorm, post-LayerNorm
// TransformerBlocks of BERT's shape (model/layers/bert_layer.h under DistilBERT's weight names),
// and DistilBertForSequenceClassification's head on the first token:
// logits = classifier(relu(pre_classifier(h[0]))), or DistilBertForTokenClassification's
// logits[t] = classifier(h[t]) on every token, or DistilBertForMaskedLM's head (fill-mask, and
// SPLADE sparse embeddings: model/layers/masked_lm_head.h).
//
// The whole ragged batch is one [total_tokens, hidden] matrix; nothing is padded.
#include <string>
#include <vector>

#include "base/error.h"
#include "kernels/elementwise.h"
#include "kernels/matmul.h"
#include "model/architectures/architectures.h"
#include "model/architectures/distilbert/distilbert_config.h"
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

class DistilBertEncoder final : public EncoderBase {
 public:
  DistilBertEncoder(const ModelConfig& config, WeightStore store, const LoadOptions& options);
  void forward(std::span<const SequenceInput> batch, ForwardOutput& out) const override;

 private:
  std::int64_t intermediate_size_ = 0;
  const float* word_embeddings_ = nullptr;      // [vocab_size, hidden]
  const float* position_embeddings_ = nullptr;  // [max_position_embeddings, hidden]
  LayerNormWeights embedding_norm_;
  std::vector<BertLayer> layers_;
};

DistilBertEncoder::DistilBertEncoder(const ModelConfig& config, WeightStore store,
                                     const LoadOptions& options)
    : EncoderBase(config, std::move(store), options), intermediate_size_(config.intermediate_size) {
  // The task models nest the encoder under "distilbert."; DistilBertModel is saved without a
  // prefix, though some checkpoints carry one anyway.
  std::string base = "distilbert.";
  if (info_.head == HeadKind::kBaseModel && store_.contains("embeddings.word_embeddings.weight"))
    base.clear();

  const std::int64_t h = config.hidden_size;

  word_embeddings_ =
      store_.get(base + "embeddings.word_embeddings.weight", {config.vocab_size, h}).data;
  position_embeddings_ =
      store_
          .get(base + "embeddings.position_embeddings.weight", {config.max_position_embeddings, h})
          .data;
  embedding_norm_ =
      load_layer_norm(store_, base + "embeddings.LayerNorm", h, config.layer_norm_eps);
  layers_.reserve(static_cast<std::size_t>(config.num_hidden_layers));
  for (int i = 0; i < config.num_hidden_layers; ++i) {
    layers_.emplace_back(store_, base + "transformer.layer." + std::to_string(i) + ".", config,
                         options.precision, kDistilBertLayerNames);
    store_.drop_resident_pages();  // this layer's matrices are packed: its file pages can go
  }

  HeadWeights head_weights;
  head_weights.sequence_dense = "pre_classifier";
  head_weights.sequence_activation = kernels::Activation::kRelu;
  head_weights.masked_lm = [&] {
    // vocab_layer_norm's eps is 1e-12 whatever the config says.
    return MaskedLmHead(
        store_,
        {"vocab_transform", "vocab_layer_norm", "vocab_projector.weight", "vocab_projector.bias"},
        kernels::activation_from_hf(config.hidden_act), 1e-12, word_embeddings_, config.vocab_size,
        h);
  };
  task_heads_ = EncoderHeads(store_, info_, head_weights);
  info_.parameter_count = store_.parameter_count();
  store_.drop_resident_pages();  // every matrix is packed now
}

void DistilBertEncoder::forward(std::span<const SequenceInput> batch, ForwardOutput& out) const {
  if (!begin_forward(batch, info_, out)) return;
  BertStackPass pass(threads_, arenas_, out, batch.size(), info_.hidden_size, intermediate_size_);

  // Embeddings: word + position (0, 1, ... per sequence), then LayerNorm.
  auto* ids = pass.arena->alloc_as<std::int32_t>(static_cast<std::size_t>(pass.tokens));
  auto* positions = pass.arena->alloc_as<std::int32_t>(static_cast<std::size_t>(pass.tokens));
  for (std::size_t s = 0; s < pass.num_seqs; ++s) {
    for (std::size_t i = 0; i < batch[s].input_ids.size(); ++i) {
      ids[pass.offsets[s] + i] = batch[s].input_ids[i];
      positions[pass.offsets[s] + i] = static_cast<std::int32_t>(i);
    }
  }
  const std::int64_t h = pass.hidden;
  kernels::embedding_gather(word_embeddings_, h, ids, pass.tokens, pass.x, false);
  kernels::embedding_gather(position_embeddings_, h, positions, pass.tokens, pass.x, true);
  kernels::layer_norm(pass.x, pass.tokens, h, embedding_norm_.gamma, embedding_norm_.beta,
                      embedding_norm_.eps);
  pass.run(layers_);

  task_heads_.forward(pass.x, pass.offsets, batch, *pass.arena, out);
}

}  // namespace

const ArchitectureFamily kDistilBertFamily = {
    &read_distilbert_family_config,
    &load_family_encoder<DistilBertEncoder, &shared_config>,
};

}  // namespace onepass::model
