// The heads every architecture puts on its last hidden states, written once: a sequence
// classifier reads each sequence's first token ([CLS] / <s>), a token classifier every token.
// EncoderHeads loads and runs whichever one a checkpoint carries; a family only says where its
// heads' weights are (HeadWeights).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "kernels/matmul.h"
#include "model/encoder.h"
#include "model/layers/masked_lm_head.h"
#include "tensor/arena.h"
#include "weights/weight_store.h"

namespace onepass::model {

// Copies each sequence's first row of x [tokens, hidden] (row offsets[s]) into
// first [num_seqs, hidden].
void gather_first_tokens(const float* x, const std::size_t* offsets, std::size_t num_seqs,
                         std::int64_t hidden, float* first);

// Sequence classification: first tokens -> dense (with its own activation: BERT's tanh pooler,
// ELECTRA's and DeBERTa's GELU, DistilBERT's ReLU) -> classifier. logits: [num_seqs, labels].
void classify_sequences(const float* x, const std::size_t* offsets, std::size_t num_seqs,
                        std::int64_t hidden, const kernels::Linear& dense,
                        const kernels::Linear& classifier, int num_labels,
                        tensor::ScratchArena& arena, std::vector<float>& logits);

// A base model's pooler (BERT's, MPNet's: tanh(dense(first token))) into
// pooler_output [num_seqs, hidden].
void pool_first_tokens(const float* x, const std::size_t* offsets, std::size_t num_seqs,
                       std::int64_t hidden, const kernels::Linear& pooler,
                       tensor::ScratchArena& arena, std::vector<float>& pooler_output);

// The Linear a per-token head (per_token_head) runs on every token: "classifier"
// (*ForTokenClassification) or "qa_outputs" (*ForQuestionAnswering), the same name in every
// family.
const char* token_head_name(HeadKind head);

// Token classification: the classifier on every token. logits: [tokens, labels], token-major.
void classify_tokens(const float* x, std::int64_t tokens, const kernels::Linear& classifier,
                     int num_labels, std::vector<float>& logits);

// Where a family keeps its heads, and what differs between families; everything else about the
// heads (which one the checkpoint carries, loading, the forward) is EncoderHeads'.
struct HeadWeights {
  // A base model's pooler: tanh(dense(first token)) under `<base_pooler>.weight`, run when the
  // checkpoint has it (BertModel, MPNetModel). Empty: the family's base model has none.
  std::string base_pooler;
  // Sequence classification: first token -> `sequence_dense` with `sequence_activation` (BERT's
  // pooler and RoBERTa's classifier.dense: tanh; ELECTRA's: GELU; DistilBERT's pre_classifier:
  // ReLU; DeBERTa's ContextPooler: the config's) -> `sequence_out` [num_labels, hidden].
  std::string sequence_dense;
  kernels::Activation sequence_activation = kernels::Activation::kTanh;
  std::string sequence_out = "classifier";
  // The masked-LM head, built only for a masked-LM checkpoint: each family has its own names,
  // activation and embedding width (masked_lm_head.h).
  std::function<MaskedLmHead()> masked_lm;
};

// The head `info.head` names (model/heads/head_kind.h), loaded from a family's weights and run
// on the encoder's last hidden states. Token classification and question answering read
// "classifier" / "qa_outputs" (token_head_name) in every family.
class EncoderHeads {
 public:
  EncoderHeads() = default;
  // Loads info.head's weights; for a base model, sets info.has_pooler to whether the
  // checkpoint has the pooler `weights` names.
  EncoderHeads(const weights::WeightStore& store, ModelInfo& info, const HeadWeights& weights);

  // x: the last hidden states [tokens, hidden], sequence s in rows offsets[s] to
  // offsets[s + 1]. Fills what encoder.h says the head's ForwardOutput holds.
  void forward(const float* x, const std::size_t* offsets, std::span<const SequenceInput> batch,
               tensor::ScratchArena& arena, ForwardOutput& out) const;

 private:
  HeadKind head_ = HeadKind::kBaseModel;
  std::int64_t hidden_ = 0;
  int num_labels_ = 0;
  bool has_pooler_ = false;
  kernels::Linear dense_;       // the base model's pooler, or the sequence head's dense
  kernels::Linear classifier_;  // [num_labels, hidden]
  MaskedLmHead masked_lm_;
};

}  // namespace onepass::model
