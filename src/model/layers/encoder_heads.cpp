#include "model/layers/encoder_heads.h"

#include <cstring>

namespace onepass::model {

void gather_first_tokens(const float* x, const std::size_t* offsets, std::size_t num_seqs,
                         std::int64_t hidden, float* first) {
  const auto h = static_cast<std::size_t>(hidden);
  for (std::size_t s = 0; s < num_seqs; ++s)
    std::memcpy(first + s * h, x + offsets[s] * h, h * sizeof(float));
}

void classify_sequences(const float* x, const std::size_t* offsets, std::size_t num_seqs,
                        std::int64_t hidden, const kernels::Linear& dense,
                        const kernels::Linear& classifier, int num_labels,
                        tensor::ScratchArena& arena, std::vector<float>& logits) {
  const std::size_t rows = num_seqs * static_cast<std::size_t>(hidden);
  float* first = arena.alloc(rows);
  float* pooled = arena.alloc(rows);
  gather_first_tokens(x, offsets, num_seqs, hidden, first);
  dense.forward(first, static_cast<std::int64_t>(num_seqs), pooled);
  logits.resize(num_seqs * static_cast<std::size_t>(num_labels));
  classifier.forward(pooled, static_cast<std::int64_t>(num_seqs), logits.data());
}

void pool_first_tokens(const float* x, const std::size_t* offsets, std::size_t num_seqs,
                       std::int64_t hidden, const kernels::Linear& pooler,
                       tensor::ScratchArena& arena, std::vector<float>& pooler_output) {
  float* first = arena.alloc(num_seqs * static_cast<std::size_t>(hidden));
  gather_first_tokens(x, offsets, num_seqs, hidden, first);
  pooler_output.resize(num_seqs * static_cast<std::size_t>(hidden));
  pooler.forward(first, static_cast<std::int64_t>(num_seqs), pooler_output.data());
}

const char* token_head_name(HeadKind head) {
  return head == HeadKind::kQuestionAnswering ? "qa_outputs" : "classifier";
}

void classify_tokens(const float* x, std::int64_t tokens, const kernels::Linear& classifier,
                     int num_labels, std::vector<float>& logits) {
  logits.resize(static_cast<std::size_t>(tokens) * static_cast<std::size_t>(num_labels));
  classifier.forward(x, tokens, logits.data());
}

}  // namespace onepass::model
