// BERT and the classes that run RoBERTa's code (RoBERTa, XLM-R, CamemBERT; the table's
// roberta_code), and MiniLM checkpoints saved as BertModel, as transformers v4.47.1 runs them:
// absolute position embeddings, post-LayerNorm layers, the sequence-classification heads of
// BertForSequenceClassification (pooler + linear) and RobertaForSequenceClassification (dense +
// tanh + out_proj on the first token), the *ForTokenClassification head (one linear
// "classifier" on every token; no pooler), *ForQuestionAnswering (the same with "qa_outputs"),
// and the masked-LM heads of BertForMaskedLM and RobertaForMaskedLM (fill-mask, and SPLADE
// sparse embeddings: model/layers/masked_lm_head.h).
//
// The whole ragged batch is one [total_tokens, hidden] matrix; nothing is padded.
#include <string>
#include <vector>

#include "base/error.h"
#include "kernels/elementwise.h"
#include "kernels/matmul.h"
#include "model/architectures/architectures.h"
#include "model/architectures/bert/bert_config.h"
#include "model/batch_check.h"
#include "model/layers/bert_layer.h"
#include "model/layers/bert_stack_pass.h"
#include "model/layers/encoder_base.h"
#include "model/layers/encoder_heads.h"
#include "model/layers/masked_lm_head.h"
#include "model/layers/positions.h"
#include "model/precision_check.h"
#include "tensor/arena.h"

namespace onepass::model {
namespace {

using weights::ModelConfig;
using weights::WeightStore;

class BertEncoder final : public EncoderBase {
 public:
  BertEncoder(const BertConfig& config, WeightStore store, const LoadOptions& options);
  void forward(std::span<const SequenceInput> batch, ForwardOutput& out) const override;

 private:
  void embed(std::span<const SequenceInput> batch, const std::size_t* offsets, float* x,
             tensor::ScratchArena& arena) const;

  bool roberta_positions_ = false;
  int pad_token_id_ = 0;
  std::int64_t intermediate_size_ = 0;
  const float* word_embeddings_ = nullptr;        // [vocab_size, hidden]
  const float* position_embeddings_ = nullptr;    // [max_position_embeddings, hidden]
  const float* token_type_embeddings_ = nullptr;  // [type_vocab_size, hidden] or null
  LayerNormWeights embedding_norm_;
  std::vector<BertLayer> layers_;
};

BertEncoder::BertEncoder(const BertConfig& config, WeightStore store, const LoadOptions& options)
    : EncoderBase(config, std::move(store), options), intermediate_size_(config.intermediate_size) {
  const bool roberta = find_architecture(info_.architecture)->roberta_code;
  const bool classifier = info_.head != HeadKind::kBaseModel;
  if (config.position_embedding_type != "absolute") {
    throw Error(ErrorKind::kUnsupported, "position_embedding_type " +
                                             config.position_embedding_type +
                                             " is not supported (only absolute)");
  }

  // Classification checkpoints nest the encoder under "bert." / "roberta."; base models are
  // saved without a prefix, though some carry one anyway.
  std::string base = roberta ? "roberta." : "bert.";
  if (!classifier && store_.contains("embeddings.word_embeddings.weight")) base.clear();

  const std::int64_t h = config.hidden_size;
  // create_position_ids_from_input_ids: RoBERTa positions start at padding_idx + 1
  // (describe_checkpoint has checked pad_token_id and taken the rows off max_tokens).
  roberta_positions_ = roberta;
  if (roberta_positions_) pad_token_id_ = *config.pad_token_id;

  word_embeddings_ =
      store_.get(base + "embeddings.word_embeddings.weight", {config.vocab_size, h}).data;
  position_embeddings_ =
      store_
          .get(base + "embeddings.position_embeddings.weight", {config.max_position_embeddings, h})
          .data;
  if (config.type_vocab_size > 0) {
    token_type_embeddings_ =
        store_.get(base + "embeddings.token_type_embeddings.weight", {config.type_vocab_size, h})
            .data;
  }
  embedding_norm_ =
      load_layer_norm(store_, base + "embeddings.LayerNorm", h, config.layer_norm_eps);
  layers_.reserve(static_cast<std::size_t>(config.num_hidden_layers));
  for (int i = 0; i < config.num_hidden_layers; ++i) {
    layers_.emplace_back(store_, base + "encoder.layer." + std::to_string(i) + ".", config,
                         options.precision);
    store_.drop_resident_pages();  // this layer's matrices are packed: its file pages can go
  }

  // BertPooler (tanh(dense(first token))) also feeds BERT's sequence classifier; RoBERTa's
  // classification head has a dense of its own and out_proj.
  HeadWeights head_weights;
  head_weights.base_pooler = base + "pooler.dense";
  head_weights.sequence_dense = roberta ? "classifier.dense" : base + "pooler.dense";
  head_weights.sequence_out = roberta ? "classifier.out_proj" : "classifier";
  head_weights.masked_lm = [&]() -> MaskedLmHead {
    if (roberta) {
      // RobertaLMHead: dense, GELU (erf, whatever hidden_act says), layer_norm, decoder. Its
      // bias is lm_head.bias; decoder.bias is the same tensor, which a checkpoint may keep
      // instead.
      const char* bias = store_.contains("lm_head.bias") ? "lm_head.bias" : "lm_head.decoder.bias";
      return MaskedLmHead(store_,
                          {"lm_head.dense", "lm_head.layer_norm", "lm_head.decoder.weight", bias},
                          kernels::Activation::kGeluErf, config.layer_norm_eps, word_embeddings_,
                          config.vocab_size, h);
    }
    // BertLMPredictionHead. Its bias is cls.predictions.bias; decoder.bias is the same tensor,
    // which a checkpoint may keep instead.
    const char* bias = store_.contains("cls.predictions.bias") ? "cls.predictions.bias"
                                                               : "cls.predictions.decoder.bias";
    return MaskedLmHead(store_,
                        {"cls.predictions.transform.dense", "cls.predictions.transform.LayerNorm",
                         "cls.predictions.decoder.weight", bias},
                        kernels::activation_from_hf(config.hidden_act), config.layer_norm_eps,
                        word_embeddings_, config.vocab_size, h);
  };
  task_heads_ = EncoderHeads(store_, info_, head_weights);
  info_.parameter_count = store_.parameter_count();
  store_.drop_resident_pages();  // every matrix is packed now
}

void BertEncoder::embed(std::span<const SequenceInput> batch, const std::size_t* offsets, float* x,
                        tensor::ScratchArena& arena) const {
  const std::size_t tokens = offsets[batch.size()];
  auto* ids = arena.alloc_as<std::int32_t>(tokens);
  auto* positions = arena.alloc_as<std::int32_t>(tokens);
  auto* types = arena.alloc_as<std::int32_t>(tokens);
  for (std::size_t s = 0; s < batch.size(); ++s) {
    const auto& seq = batch[s];
    const std::size_t begin = offsets[s];
    for (std::size_t i = 0; i < seq.input_ids.size(); ++i) {
      ids[begin + i] = seq.input_ids[i];
      types[begin + i] = seq.token_type_ids.empty() ? 0 : seq.token_type_ids[i];
      positions[begin + i] = static_cast<std::int32_t>(i);
    }
    if (roberta_positions_)
      positions_after_padding(seq.input_ids, pad_token_id_, positions + begin);
  }
  const std::int64_t h = info_.hidden_size;
  const auto n = static_cast<std::int64_t>(tokens);
  kernels::embedding_gather(word_embeddings_, h, ids, n, x, false);
  kernels::embedding_gather(position_embeddings_, h, positions, n, x, true);
  if (token_type_embeddings_ != nullptr)
    kernels::embedding_gather(token_type_embeddings_, h, types, n, x, true);
  kernels::layer_norm(x, n, h, embedding_norm_.gamma, embedding_norm_.beta, embedding_norm_.eps);
}

void BertEncoder::forward(std::span<const SequenceInput> batch, ForwardOutput& out) const {
  if (!begin_forward(batch, info_, out)) return;
  BertStackPass pass(threads_, arenas_, out, batch.size(), info_.hidden_size, intermediate_size_);
  embed(batch, pass.offsets, pass.x, *pass.arena);
  pass.run(layers_);

  task_heads_.forward(pass.x, pass.offsets, batch, *pass.arena, out);
}

}  // namespace

const ArchitectureFamily kBertFamily = {
    &read_bert_family_config,
    &load_family_encoder<BertEncoder, &bert_config>,
};

}  // namespace onepass::model
