// The long-input policy of a request (docs/api.md "Long inputs"): "long_input" ("chunk" or
// "reject") and "stride" read from the toolkit's parameters or a TEI body, settled against the
// server's --long-input and the request's truncation into the runtime request.
#pragma once

#include <cstddef>
#include <optional>

#include "api/common/call.h"
#include "api/common/json_request.h"
#include "runtime/service.h"

namespace onepass::api {

struct LongInputParameters {
  std::optional<runtime::LongInput> policy;  // absent: --long-input
  std::optional<std::size_t> stride;         // absent: the runtime's default overlap
};

// Throws ApiError kValidation for a "long_input" other than "chunk" / "reject" or a "stride"
// that is not an integer in [0, 1000000].
LongInputParameters parse_long_input(const Json& object);

// Sets request.long_input, .stride and, when chunking, turns truncation off. The policy is the
// request's, else the server's. Chunking applies only to logits and pooled embeddings, and an
// explicit truncation request wins over the server's policy; asked for explicitly in either
// case, it is ApiError kValidation. `explicit_truncate`: the request's own truncation
// parameter, if it gave one.
void apply_long_input(const LongInputParameters& parameters, const ApiOptions& options,
                      std::optional<bool> explicit_truncate, runtime::InferenceRequest& request);

}  // namespace onepass::api
