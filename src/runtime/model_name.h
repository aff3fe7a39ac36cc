// The one rule for a model's name, for the names `serve --model NAME=...` and POST /models
// register and for the names requests ask for: the API layer refuses (404) a requested name no
// model could be registered under, before any lookup.
#pragma once

#include <string_view>

namespace onepass::runtime {

inline constexpr std::size_t kMaxModelNameBytes = 128;

// 1 to kMaxModelNameBytes characters of [A-Za-z0-9._-], not "." or "..". Names are only ever
// compared against registered names, never used as paths.
bool is_valid_model_name(std::string_view name);

}  // namespace onepass::runtime
