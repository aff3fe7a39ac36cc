// The API key check every transport shares (HTTP's Authorization header, gRPC's authorization
// metadata): "Bearer KEY", the scheme in any case, the key compared in constant time.
#pragma once

#include <string_view>

namespace onepass::api {

bool bearer_matches(std::string_view authorization, std::string_view key);

}  // namespace onepass::api
