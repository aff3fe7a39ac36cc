// Structured logs: one line per event ("request", "model_load", "drain", ...) with typed
// fields, written as text (`key=value`) or one JSON object per line, through spdlog's
// thread-safe stderr sink. Two rules hold for every line, whoever writes it:
//  - a field whose name marks a secret (api_key, authorization, token, password, secret, body)
//    is written as "[redacted]", and so is any value that looks like a bearer or Hub token;
//  - strings are escaped (JSON) or quoted (text), so a client cannot forge a line.
// configure() once at start-up; write() is safe from any thread. Callers check enabled() before
// building fields for a debug line, so a disabled level costs one relaxed load.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace onepass::log {

enum class Level { kDebug = 0, kInfo = 1, kWarn = 2, kError = 3, kOff = 4 };
enum class Format { kText, kJson };

// Parses "debug|info|warn|warning|error|off" and "text|json"; nullopt for anything else.
std::optional<Level> parse_level(std::string_view name);
std::optional<Format> parse_format(std::string_view name);
std::string_view level_name(Level level);

class Fields {
 public:
  Fields& add(std::string_view key, std::string_view value);
  Fields& add(std::string_view key, const char* value) { return add(key, std::string_view(value)); }
  Fields& add(std::string_view key, const std::string& value) {
    return add(key, std::string_view(value));
  }
  Fields& add(std::string_view key, bool value);
  Fields& add(std::string_view key, std::int64_t value);
  Fields& add(std::string_view key, std::uint64_t value);
  Fields& add(std::string_view key, int value) { return add(key, std::int64_t{value}); }
  Fields& add(std::string_view key, unsigned value) { return add(key, std::uint64_t{value}); }
  Fields& add(std::string_view key, long long value) {
    return add(key, static_cast<std::int64_t>(value));
  }
  Fields& add(std::string_view key, unsigned long long value) {
    return add(key, static_cast<std::uint64_t>(value));
  }
  Fields& add(std::string_view key, double value);
  // Milliseconds with microsecond resolution.
  Fields& add_ms(std::string_view key, std::chrono::nanoseconds duration);

  struct Field {
    std::string key;
    std::string value;  // rendered; strings unescaped
    bool is_string = false;
  };
  const std::vector<Field>& items() const { return items_; }

 private:
  std::vector<Field> items_;
};

// True for field names that name a secret or a request body.
bool is_secret_key(std::string_view key);
// True for values that look like credentials: "Bearer ...", "Basic ...", Hub tokens "hf_...".
bool looks_like_secret(std::string_view value);

// The whole line (no newline) for `event` at `time`; what write() sends to the sink.
std::string render(Format format, Level level, std::string_view event, const Fields& fields,
                   std::chrono::system_clock::time_point time);

void configure(Format format, Level level);
Format format();
bool enabled(Level level);
void write(Level level, std::string_view event, const Fields& fields = {});
// Tests: lines go to this callback instead of stderr (nullptr restores stderr).
void set_test_sink(void (*sink)(const std::string& line));

inline void info(std::string_view event, const Fields& fields = {}) {
  write(Level::kInfo, event, fields);
}
inline void warn(std::string_view event, const Fields& fields = {}) {
  write(Level::kWarn, event, fields);
}
inline void error(std::string_view event, const Fields& fields = {}) {
  write(Level::kError, event, fields);
}

// Request ids: an incoming X-Request-Id is kept when it is 1-128 characters of
// [A-Za-z0-9._:-] (so it is safe in any log format); else a fresh 32-hex-digit id is made.
bool valid_request_id(std::string_view id);
std::string new_request_id();
std::string request_id_from(const std::string* header);

}  // namespace onepass::log
