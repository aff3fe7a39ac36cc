// The long-input policy of one request (docs/api.md "Long inputs"): what the request asked
// ("long_input": "chunk" or "reject", and a "stride"), settled against the server's
// --long-input and the request's own truncation. The dialects read the fields from their JSON
// (api/common/long_input.h); the scheduler cuts and combines the windows (runtime/windows.h).
#pragma once

#include <cstddef>
#include <optional>

#include "runtime/service.h"

namespace onepass::runtime {

struct LongInputRequest {
  std::optional<LongInput> policy;    // absent: the server's
  std::optional<std::size_t> stride;  // absent: the runtime's default overlap
};

// Sets request.long_input, .stride and, when chunking, turns truncation off. The policy is the
// request's, else `server_policy`. Chunking applies only to logits and pooled embeddings, and an
// explicit truncation request wins over the server's policy; asked for explicitly in either
// case, it is FieldError kInvalid ("long_input"). `explicit_truncate`: the request's own
// truncation parameter, if it gave one. Set request.output first.
void apply_long_input(const LongInputRequest& asked, LongInput server_policy,
                      std::optional<bool> explicit_truncate, InferenceRequest& request);

}  // namespace onepass::runtime
