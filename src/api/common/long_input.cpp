#include "api/common/long_input.h"

#include "api/common/api_error.h"

namespace onepass::api {

runtime::LongInputRequest parse_long_input(const Json& object) {
  runtime::LongInputRequest out;
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

}  // namespace onepass::api
