#include "api/common/json_request.h"

#include <cmath>

#include "api/common/api_error.h"

namespace onepass::api {

namespace {

bool iequals_prefix(std::string_view text, std::string_view lower_prefix) {
  if (text.size() < lower_prefix.size()) return false;
  for (std::size_t i = 0; i < lower_prefix.size(); ++i) {
    char c = text[i];
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    if (c != lower_prefix[i]) return false;
  }
  return true;
}

// Depth of [ and { outside strings; stops early once past the limit.
void check_depth(std::string_view text) {
  int depth = 0;
  bool in_string = false;
  bool escaped = false;
  for (const char c : text) {
    if (in_string) {
      if (escaped)
        escaped = false;
      else if (c == '\\')
        escaped = true;
      else if (c == '"')
        in_string = false;
      continue;
    }
    if (c == '"')
      in_string = true;
    else if (c == '[' || c == '{') {
      if (++depth > kMaxJsonDepth)
        throw ApiError(ApiErrorKind::kBadRequest,
                       "JSON nesting is deeper than " + std::to_string(kMaxJsonDepth) + " levels");
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
}

}  // namespace

void require_json_content_type(const http::Request& request) {
  const std::string* type = request.header("content-type");
  if (!type)
    throw ApiError(ApiErrorKind::kUnsupportedMedia, "Content-Type must be application/json");
  std::string_view media = *type;
  while (!media.empty() && (media.front() == ' ' || media.front() == '\t')) media.remove_prefix(1);
  if (!iequals_prefix(media, "application/json"))
    throw ApiError(ApiErrorKind::kUnsupportedMedia, "Content-Type must be application/json");
  media.remove_prefix(16);
  if (!media.empty() && media.front() != ';' && media.front() != ' ')
    throw ApiError(ApiErrorKind::kUnsupportedMedia, "Content-Type must be application/json");
}

Json parse_json_text(std::string_view text) {
  // nlohmann's lexer takes a NUL byte for the end of its input, so '{"inputs":"a"}\0garbage'
  // would parse as the object and the rest never be looked at. JSON has no raw NUL anywhere
  // (inside strings it is escaped as \u0000), so one is a bad body, wherever it sits.
  if (const auto nul = text.find('\0'); nul != std::string_view::npos)
    throw ApiError(ApiErrorKind::kBadRequest,
                   "body is not valid JSON: a NUL byte at offset " + std::to_string(nul));
  check_depth(text);
  try {
    return Json::parse(text.begin(), text.end());
  } catch (const Json::parse_error& e) {
    // nlohmann's message ends with the bytes it read last, which may be anything: keep the
    // position and the reason only.
    std::string what = e.what();
    const auto start = what.find("parse error");
    what = start == std::string::npos ? std::string("parse error") : what.substr(start);
    const auto last_read = what.find("; last read");
    if (last_read != std::string::npos) what.resize(last_read);
    throw ApiError(ApiErrorKind::kBadRequest, "body is not valid JSON: " + what);
  } catch (const Json::out_of_range&) {
    // A number beyond double's range (1e999999). nlohmann's message quotes the whole number,
    // which may be megabytes long: name the problem only.
    throw ApiError(ApiErrorKind::kBadRequest, "body is not valid JSON: a number is out of range");
  }
}

Json parse_json_body(const http::Request& request) {
  require_json_content_type(request);
  if (request.body.empty())
    throw ApiError(ApiErrorKind::kBadRequest, "body is empty; expected JSON");
  return parse_json_text(request.body);
}

const Json* get_field(const Json& object, const char* field) {
  if (!object.is_object()) return nullptr;
  const auto it = object.find(field);
  if (it == object.end() || it->is_null()) return nullptr;
  return &*it;
}

std::optional<bool> get_bool(const Json& object, const char* field) {
  const Json* v = get_field(object, field);
  if (!v) return std::nullopt;
  if (!v->is_boolean())
    throw ApiError(ApiErrorKind::kValidation, std::string("'") + field + "' must be a boolean",
                   field);
  return v->get<bool>();
}

std::optional<std::int64_t> get_int(const Json& object, const char* field) {
  const Json* v = get_field(object, field);
  if (!v) return std::nullopt;
  if (v->is_number_integer()) {
    if (v->is_number_unsigned() && v->get<std::uint64_t>() > static_cast<std::uint64_t>(INT64_MAX))
      throw ApiError(ApiErrorKind::kValidation, std::string("'") + field + "' is too large", field);
    return v->get<std::int64_t>();
  }
  throw ApiError(ApiErrorKind::kValidation, std::string("'") + field + "' must be an integer",
                 field);
}

std::optional<std::string> get_string(const Json& object, const char* field) {
  const Json* v = get_field(object, field);
  if (!v) return std::nullopt;
  if (!v->is_string())
    throw ApiError(ApiErrorKind::kValidation, std::string("'") + field + "' must be a string",
                   field);
  return v->get<std::string>();
}

}  // namespace onepass::api
