#include "model/batch_check.h"

#include "base/error.h"

namespace onepass::model {

std::optional<std::string> sequence_problem(const SequenceInput& sequence, const ModelInfo& info) {
  const auto n = sequence.input_ids.size();
  if (n == 0) return "the sequence is empty";
  if (n > static_cast<std::size_t>(info.max_tokens)) {
    return std::to_string(n) + " tokens is more than the model's maximum of " +
           std::to_string(info.max_tokens) + " (max_position_embeddings)";
  }
  for (const auto id : sequence.input_ids) {
    if (id < 0 || id >= info.vocab_size) {
      return "token id " + std::to_string(id) + " is outside the vocabulary (vocab_size " +
             std::to_string(info.vocab_size) + ")";
    }
  }
  if (!sequence.token_type_ids.empty()) {
    if (sequence.token_type_ids.size() != n) {
      return "token_type_ids has " + std::to_string(sequence.token_type_ids.size()) +
             " entries but input_ids has " + std::to_string(n);
    }
    // type_vocab_size 0 means the model has no token-type embedding and ignores them.
    if (info.type_vocab_size > 0) {
      for (const auto t : sequence.token_type_ids) {
        if (t < 0 || t >= info.type_vocab_size) {
          return "token type id " + std::to_string(t) + " is outside the model's type_vocab_size " +
                 std::to_string(info.type_vocab_size);
        }
      }
    }
  }
  if (!sequence.vocab_logit_positions.empty()) {
    if (info.head != HeadKind::kMaskedLm) return "only a masked-LM head gives vocabulary logits";
    for (const auto p : sequence.vocab_logit_positions) {
      if (p < 0 || static_cast<std::size_t>(p) >= n) {
        return "vocabulary logit position " + std::to_string(p) + " is outside the sequence (" +
               std::to_string(n) + " tokens)";
      }
    }
  }
  return std::nullopt;
}

void check_batch(std::span<const SequenceInput> batch, const ModelInfo& info) {
  for (std::size_t i = 0; i < batch.size(); ++i) {
    if (auto problem = sequence_problem(batch[i], info)) {
      throw Error(ErrorKind::kInvalidInput, "sequence " + std::to_string(i) + ": " + *problem);
    }
  }
}

bool begin_forward(std::span<const SequenceInput> batch, const ModelInfo& info,
                   ForwardOutput& out) {
  check_batch(batch, info);
  const std::size_t n = batch.size();
  out.token_offsets.resize(n + 1);
  out.token_offsets[0] = 0;
  for (std::size_t s = 0; s < n; ++s)
    out.token_offsets[s + 1] = out.token_offsets[s] + batch[s].input_ids.size();
  out.logits.clear();
  out.hidden_states.clear();
  out.pooler_output.clear();
  out.position_logits.clear();
  return n != 0;
}

}  // namespace onepass::model
