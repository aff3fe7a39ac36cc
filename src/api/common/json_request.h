// Request bodies into JSON values, and typed field access that fails with the dialect-neutral
// ApiError kinds. Nesting depth is limited before nlohmann parses anything, so a body of a
// million '[' can neither exhaust the stack nor a lot of memory.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "http/message.h"

namespace onepass::api {

using Json = nlohmann::json;

inline constexpr int kMaxJsonDepth = 32;

// 415 unless the Content-Type is application/json (parameters such as charset allowed);
// 400 for invalid JSON, invalid UTF-8 (lone surrogates and overlong forms included), trailing
// garbage or nesting deeper than kMaxJsonDepth.
Json parse_json_body(const http::Request& request);
void require_json_content_type(const http::Request& request);
Json parse_json_text(std::string_view text);

// Field access: nullopt when absent or null; ApiError kValidation naming the field when the
// type is wrong.
std::optional<bool> get_bool(const Json& object, const char* field);
std::optional<std::int64_t> get_int(const Json& object, const char* field);
std::optional<std::string> get_string(const Json& object, const char* field);
const Json* get_field(const Json& object, const char* field);

}  // namespace onepass::api
