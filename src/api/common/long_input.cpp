#include "api/common/long_input.h"

#include "api/common/api_error.h"

namespace onepass::api {

LongInputParameters parse_long_input(const Json& object) {
  LongInputParameters out;
  if (const auto policy = get_string(object, "long_input")) {
    if (*policy == "chunk")
      out.policy = runtime::LongInput::kChunk;
    else if (*policy == "reject")
      out.policy = runtime::LongInput::kReject;
    else
      throw ApiError(ApiErrorKind::kValidation, "'long_input' must be 'chunk' or 'reject'",
                     "long_input");
  }
  if (const auto stride = get_int(object, "stride")) {
    if (*stride < 0 || *stride > 1000000)
      throw ApiError(ApiErrorKind::kValidation,
                     "'stride' must be a non-negative integer (tokens shared by two windows)",
                     "stride");
    out.stride = static_cast<std::size_t>(*stride);
  }
  return out;
}

void apply_long_input(const LongInputParameters& parameters, const ApiOptions& options,
                      std::optional<bool> explicit_truncate, runtime::InferenceRequest& request) {
  request.long_input = runtime::LongInput::kReject;
  const runtime::LongInput policy = parameters.policy.value_or(options.long_input);
  if (policy != runtime::LongInput::kChunk) return;
  const bool asked = parameters.policy.has_value();
  if (request.output != runtime::OutputKind::kLogits &&
      request.output != runtime::OutputKind::kPooled) {
    if (asked)
      throw ApiError(ApiErrorKind::kValidation,
                     "'long_input': 'chunk' applies to classification, zero-shot and pooled "
                     "embeddings only",
                     "long_input");
    return;
  }
  if (explicit_truncate.value_or(false)) {
    if (asked)
      throw ApiError(ApiErrorKind::kValidation,
                     "'long_input': 'chunk' needs truncation off; ask for one or the other",
                     "long_input");
    return;
  }
  request.truncate = false;
  request.long_input = runtime::LongInput::kChunk;
  request.stride = parameters.stride;
}

}  // namespace onepass::api
