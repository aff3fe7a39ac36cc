// The long-input fields of a request (docs/api.md "Long inputs"): "long_input" ("chunk" or
// "reject") and "stride", read from the toolkit's parameters or a TEI body. The runtime settles
// them against the server's --long-input (runtime/long_input.h).
#pragma once

#include "api/common/json_request.h"
#include "runtime/long_input.h"

namespace onepass::api {

// Throws ApiError kValidation for a "long_input" other than "chunk" / "reject" or a "stride"
// that is not an integer in [0, 1000000].
runtime::LongInputRequest parse_long_input(const Json& object);

}  // namespace onepass::api
