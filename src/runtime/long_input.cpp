#include "runtime/long_input.h"

#include "runtime/field_error.h"

namespace onepass::runtime {

void apply_long_input(const LongInputRequest& asked, LongInput server_policy,
                      std::optional<bool> explicit_truncate, InferenceRequest& request) {
  request.long_input = LongInput::kReject;
  const LongInput policy = asked.policy.value_or(server_policy);
  if (policy != LongInput::kChunk) return;
  const bool explicitly = asked.policy.has_value();
  if (request.output != OutputKind::kLogits && request.output != OutputKind::kPooled) {
    if (explicitly)
      throw FieldError(FieldProblem::kInvalid,
                       "'long_input': 'chunk' applies to classification, zero-shot and pooled "
                       "embeddings only",
                       "long_input");
    return;
  }
  if (explicit_truncate.value_or(false)) {
    if (explicitly)
      throw FieldError(FieldProblem::kInvalid,
                       "'long_input': 'chunk' needs truncation off; ask for one or the other",
                       "long_input");
    return;
  }
  request.truncate = false;
  request.long_input = LongInput::kChunk;
  request.stride = asked.stride;
}

}  // namespace onepass::runtime
