// Small typed accessors for tokenizer.json fields: every problem becomes onepass::Error
// (kInvalidModel) naming the component and the field, never a nlohmann exception.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "base/error.h"

namespace onepass::tokenizer::hf_json {

using Json = nlohmann::json;

[[noreturn]] inline void bad_field(std::string_view where, std::string_view field,
                                   std::string_view what) {
  throw Error(ErrorKind::kInvalidModel, "tokenizer.json: " + std::string(where) + ": field '" +
                                            std::string(field) + "' " + std::string(what));
}

inline const Json& require(const Json& j, std::string_view where, const char* field) {
  if (!j.is_object() || !j.contains(field)) bad_field(where, field, "is missing");
  return j.at(field);
}

inline bool get_bool(const Json& j, std::string_view where, const char* field, bool fallback) {
  if (!j.is_object() || !j.contains(field) || j.at(field).is_null()) return fallback;
  if (!j.at(field).is_boolean()) bad_field(where, field, "must be a boolean");
  return j.at(field).get<bool>();
}

inline std::string get_string(const Json& j, std::string_view where, const char* field) {
  const Json& v = require(j, where, field);
  if (!v.is_string()) bad_field(where, field, "must be a string");
  return v.get<std::string>();
}

inline std::string get_string_or(const Json& j, std::string_view where, const char* field,
                                 std::string fallback) {
  if (!j.is_object() || !j.contains(field) || j.at(field).is_null()) return fallback;
  if (!j.at(field).is_string()) bad_field(where, field, "must be a string");
  return j.at(field).get<std::string>();
}

inline std::int64_t get_int(const Json& j, std::string_view where, const char* field) {
  const Json& v = require(j, where, field);
  if (!v.is_number_integer()) bad_field(where, field, "must be an integer");
  return v.get<std::int64_t>();
}

inline std::string type_of(const Json& j, std::string_view where) {
  if (!j.is_object()) bad_field(where, "type", "belongs to an object, got something else");
  return get_string(j, where, "type");
}

[[noreturn]] inline void unsupported(std::string_view what, std::string_view name) {
  throw Error(ErrorKind::kUnsupported, "tokenizer.json: " + std::string(what) + " '" +
                                           std::string(name) + "' is not supported by onepass");
}

}  // namespace onepass::tokenizer::hf_json
