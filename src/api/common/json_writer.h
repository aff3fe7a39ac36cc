// A small streaming JSON writer for responses. Floats are written as the shortest decimal that
// parses back to the same float32 (std::to_chars), so clients get the model's exact values
// without the noise of a double round trip, and large embedding arrays cost one pass.
// Non-finite floats are refused (the NaN guard belongs to the caller; this is the last line).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace onepass::api {

class JsonWriter {
 public:
  JsonWriter& begin_object();
  JsonWriter& end_object();
  JsonWriter& begin_array();
  JsonWriter& end_array();
  JsonWriter& key(std::string_view name);

  JsonWriter& value(std::string_view text);
  JsonWriter& value(const char* text) { return value(std::string_view(text)); }
  JsonWriter& value(const std::string& text) { return value(std::string_view(text)); }
  JsonWriter& value(float number);
  JsonWriter& value(std::int64_t number);
  JsonWriter& value(int number) { return value(static_cast<std::int64_t>(number)); }
  JsonWriter& value(std::size_t number) { return value(static_cast<std::int64_t>(number)); }
  JsonWriter& value(bool flag);
  JsonWriter& null();
  JsonWriter& floats(std::span<const float> numbers);  // as one array

  std::string take() { return std::move(out_); }
  const std::string& str() const { return out_; }

 private:
  void separate();
  std::string out_;
  std::vector<bool> has_item_;  // per open container: an item was written already
  bool after_key_ = false;
};

// Escapes `text` as a JSON string (with quotes) onto `out`.
void append_json_string(std::string& out, std::string_view text);

}  // namespace onepass::api
