#include "model/layers/encoder_heads.h"

#include <cstring>

#include "base/error.h"
#include "model/layers/post_attention.h"

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

EncoderHeads::EncoderHeads(const weights::WeightStore& store, ModelInfo& info,
                           const HeadWeights& weights)
    : head_(info.head), hidden_(info.hidden_size), num_labels_(info.num_labels) {
  const std::int64_t h = hidden_;
  switch (head_) {
    case HeadKind::kBaseModel:
      has_pooler_ = !weights.base_pooler.empty() && store.contains(weights.base_pooler + ".weight");
      info.has_pooler = has_pooler_;
      if (has_pooler_)
        dense_ = load_linear(store, weights.base_pooler, h, h, kernels::Activation::kTanh);
      return;
    case HeadKind::kSequenceClassification:
      ONEPASS_CHECK(!weights.sequence_dense.empty(), "a sequence head without its weights");
      dense_ = load_linear(store, weights.sequence_dense, h, h, weights.sequence_activation);
      classifier_ = load_linear(store, weights.sequence_out, num_labels_, h);
      return;
    case HeadKind::kTokenClassification:
    case HeadKind::kQuestionAnswering:
      classifier_ = load_linear(store, token_head_name(head_), num_labels_, h);
      return;
    case HeadKind::kMaskedLm:
      ONEPASS_CHECK(static_cast<bool>(weights.masked_lm), "a masked-LM head without its weights");
      masked_lm_ = weights.masked_lm();
      return;
    case HeadKind::kSpanExtraction:  // GLiNER's span head runs on a base model (gliner/)
      break;
  }
  ONEPASS_CHECK(head_ != HeadKind::kSpanExtraction, "no architecture line has a span head");
}

void EncoderHeads::forward(const float* x, const std::size_t* offsets,
                           std::span<const SequenceInput> batch, tensor::ScratchArena& arena,
                           ForwardOutput& out) const {
  const std::size_t num_seqs = batch.size();
  const auto tokens = static_cast<std::int64_t>(offsets[num_seqs]);
  switch (head_) {
    case HeadKind::kBaseModel:
      out.hidden_states.assign(x, x + tokens * hidden_);
      if (has_pooler_)
        pool_first_tokens(x, offsets, num_seqs, hidden_, dense_, arena, out.pooler_output);
      return;
    case HeadKind::kSequenceClassification:
      classify_sequences(x, offsets, num_seqs, hidden_, dense_, classifier_, num_labels_, arena,
                         out.logits);
      return;
    case HeadKind::kTokenClassification:
    case HeadKind::kQuestionAnswering:
      classify_tokens(x, tokens, classifier_, num_labels_, out.logits);
      return;
    case HeadKind::kMaskedLm:
      masked_lm_.forward(x, offsets, batch, arena, out);
      return;
    case HeadKind::kSpanExtraction:
      break;
  }
  ONEPASS_CHECK(false, "no architecture line has a span head");
}

}  // namespace onepass::model
