// The heads every architecture puts on its last hidden states, written once: a sequence
// classifier reads each sequence's first token ([CLS] / <s>), a token classifier every token.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "kernels/matmul.h"
#include "model/encoder.h"
#include "tensor/arena.h"

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

}  // namespace onepass::model
