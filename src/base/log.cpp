#include "base/log.h"

#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

#include <array>
#include <atomic>
#include <cinttypes>
#include <cstdio>
#include <ctime>
#include <memory>
#include <mutex>
#include <random>

namespace onepass::log {
namespace {

std::atomic<int> g_level{static_cast<int>(Level::kInfo)};
std::atomic<int> g_format{static_cast<int>(Format::kText)};
std::atomic<void (*)(const std::string&)> g_test_sink{nullptr};

constexpr std::string_view kRedacted = "[redacted]";

char lower(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; }

bool contains(std::string_view haystack, std::string_view needle) {
  if (needle.size() > haystack.size()) return false;
  for (std::size_t i = 0; i + needle.size() <= haystack.size(); ++i) {
    bool same = true;
    for (std::size_t j = 0; j < needle.size() && same; ++j)
      same = lower(haystack[i + j]) == needle[j];
    if (same) return true;
  }
  return false;
}

bool starts_with_nocase(std::string_view value, std::string_view prefix) {
  if (value.size() < prefix.size()) return false;
  for (std::size_t i = 0; i < prefix.size(); ++i)
    if (lower(value[i]) != prefix[i]) return false;
  return true;
}

spdlog::logger& sink_logger() {
  // Created on first use: a plain stderr sink (no colours), the line already formatted.
  static std::shared_ptr<spdlog::logger> logger = [] {
    auto sink = std::make_shared<spdlog::sinks::stderr_sink_mt>();
    auto made = std::make_shared<spdlog::logger>("onepass", std::move(sink));
    made->set_pattern("%v");
    made->set_level(spdlog::level::trace);
    made->flush_on(spdlog::level::trace);
    return made;
  }();
  return *logger;
}

// Length of the valid UTF-8 sequence at s[i], or 0.
std::size_t utf8_length(std::string_view s, std::size_t i) {
  const auto c = static_cast<unsigned char>(s[i]);
  std::size_t n = 0;
  std::uint32_t min = 0;
  if (c < 0x80) return 1;
  if ((c & 0xE0) == 0xC0) {
    n = 2;
    min = 0x80;
  } else if ((c & 0xF0) == 0xE0) {
    n = 3;
    min = 0x800;
  } else if ((c & 0xF8) == 0xF0) {
    n = 4;
    min = 0x10000;
  } else {
    return 0;
  }
  if (i + n > s.size()) return 0;
  std::uint32_t cp = c & (0x7F >> n);
  for (std::size_t k = 1; k < n; ++k) {
    const auto b = static_cast<unsigned char>(s[i + k]);
    if ((b & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (b & 0x3F);
  }
  if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
  return n;
}

// JSON string body: quotes, backslashes and control characters escaped, invalid UTF-8 bytes
// replaced by U+FFFD, so every line parses whatever a client sent.
void append_json_string(std::string& out, std::string_view s) {
  out += '"';
  for (std::size_t i = 0; i < s.size();) {
    const char c = s[i];
    const auto u = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
      ++i;
    } else if (u < 0x20 || u == 0x7F) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", u);
      out += buf;
      ++i;
    } else if (u < 0x80) {
      out += c;
      ++i;
    } else if (const std::size_t n = utf8_length(s, i); n > 0) {
      out.append(s.substr(i, n));
      i += n;
    } else {
      out += "\\ufffd";
      ++i;
    }
  }
  out += '"';
}

// Text values: bare when they hold only safe characters, else JSON-quoted.
void append_text_value(std::string& out, std::string_view s) {
  bool bare = !s.empty();
  for (const char c : s) {
    const auto u = static_cast<unsigned char>(c);
    if (u <= 0x20 || u >= 0x7F || c == '"' || c == '=' || c == '\\') {
      bare = false;
      break;
    }
  }
  if (bare)
    out.append(s);
  else
    append_json_string(out, s);
}

std::string timestamp(std::chrono::system_clock::time_point time) {
  const auto since = time.time_since_epoch();
  const auto seconds = std::chrono::duration_cast<std::chrono::seconds>(since);
  const auto millis = std::chrono::duration_cast<std::chrono::milliseconds>(since - seconds);
  const std::time_t t = static_cast<std::time_t>(seconds.count());
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[64];
  std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900,
                tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
                static_cast<int>(millis.count()));
  return buf;
}

}  // namespace

std::optional<Level> parse_level(std::string_view name) {
  if (name == "debug" || name == "trace") return Level::kDebug;
  if (name == "info") return Level::kInfo;
  if (name == "warn" || name == "warning") return Level::kWarn;
  if (name == "error") return Level::kError;
  if (name == "off") return Level::kOff;
  return std::nullopt;
}

std::optional<Format> parse_format(std::string_view name) {
  if (name == "text") return Format::kText;
  if (name == "json") return Format::kJson;
  return std::nullopt;
}

std::string_view level_name(Level level) {
  switch (level) {
    case Level::kDebug:
      return "debug";
    case Level::kInfo:
      return "info";
    case Level::kWarn:
      return "warn";
    case Level::kError:
      return "error";
    case Level::kOff:
      break;
  }
  return "off";
}

bool is_secret_key(std::string_view key) {
  for (const std::string_view word :
       {"key", "authorization", "password", "secret", "credential", "cookie", "body"})
    if (contains(key, word)) return true;
  // "token" and "*_token" are credentials; "tokens" (a count) is not.
  if (key.size() >= 5) {
    const auto tail = key.substr(key.size() - 5);
    if (contains(tail, "token")) return true;
  }
  return false;
}

bool looks_like_secret(std::string_view value) {
  if (starts_with_nocase(value, "bearer ") || starts_with_nocase(value, "basic ")) return true;
  // Hugging Face tokens: "hf_" and at least 20 letters or digits.
  for (std::size_t at = value.find("hf_"); at != std::string_view::npos;
       at = value.find("hf_", at + 1)) {
    std::size_t run = 0;
    for (std::size_t i = at + 3; i < value.size(); ++i) {
      const char c = value[i];
      if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'))) break;
      ++run;
    }
    if (run >= 20) return true;
  }
  return false;
}

Fields& Fields::add(std::string_view key, std::string_view value) {
  const bool hide = is_secret_key(key) || looks_like_secret(value);
  items_.push_back({std::string(key), std::string(hide ? kRedacted : value), true});
  return *this;
}

Fields& Fields::add(std::string_view key, bool value) {
  items_.push_back({std::string(key), value ? "true" : "false", false});
  return *this;
}

Fields& Fields::add(std::string_view key, std::int64_t value) {
  items_.push_back({std::string(key), std::to_string(value), false});
  return *this;
}

Fields& Fields::add(std::string_view key, std::uint64_t value) {
  items_.push_back({std::string(key), std::to_string(value), false});
  return *this;
}

Fields& Fields::add(std::string_view key, double value) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", value);
  const std::string_view text(buf);
  // JSON has no NaN or Inf.
  const bool finite = text.find_first_of("ni") == std::string_view::npos;
  items_.push_back({std::string(key), finite ? std::string(text) : "null", false});
  return *this;
}

Fields& Fields::add_ms(std::string_view key, std::chrono::nanoseconds duration) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3f", static_cast<double>(duration.count()) / 1e6);
  items_.push_back({std::string(key), buf, false});
  return *this;
}

std::string render(Format format, Level level, std::string_view event, const Fields& fields,
                   std::chrono::system_clock::time_point time) {
  std::string out;
  out.reserve(128);
  const std::string ts = timestamp(time);
  if (format == Format::kJson) {
    out += "{\"ts\":\"";
    out += ts;
    out += "\",\"level\":\"";
    out += level_name(level);
    out += "\",\"event\":";
    append_json_string(out, event);
    for (const auto& field : fields.items()) {
      out += ',';
      append_json_string(out, field.key);
      out += ':';
      if (field.is_string)
        append_json_string(out, field.value);
      else
        out += field.value;
    }
    out += '}';
    return out;
  }
  out += ts;
  out += ' ';
  out += level_name(level);
  out += ' ';
  append_text_value(out, event);
  for (const auto& field : fields.items()) {
    out += ' ';
    append_text_value(out, field.key);
    out += '=';
    if (field.is_string)
      append_text_value(out, field.value);
    else
      out += field.value;
  }
  return out;
}

void configure(Format format, Level level) {
  g_format.store(static_cast<int>(format), std::memory_order_relaxed);
  g_level.store(static_cast<int>(level), std::memory_order_relaxed);
}

Format format() { return static_cast<Format>(g_format.load(std::memory_order_relaxed)); }

bool enabled(Level level) {
  return level != Level::kOff && static_cast<int>(level) >= g_level.load(std::memory_order_relaxed);
}

void write(Level level, std::string_view event, const Fields& fields) {
  if (!enabled(level)) return;
  const std::string line = render(format(), level, event, fields, std::chrono::system_clock::now());
  if (auto* sink = g_test_sink.load()) {
    sink(line);
    return;
  }
  static constexpr std::array kLevels = {spdlog::level::debug, spdlog::level::info,
                                         spdlog::level::warn, spdlog::level::err};
  sink_logger().log(kLevels[static_cast<std::size_t>(level)], spdlog::string_view_t(line));
}

void set_test_sink(void (*sink)(const std::string& line)) { g_test_sink.store(sink); }

bool valid_request_id(std::string_view id) {
  if (id.empty() || id.size() > 128) return false;
  for (const char c : id) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '.' || c == '_' || c == ':' || c == '-';
    if (!ok) return false;
  }
  return true;
}

std::string new_request_id() {
  // One generator per thread, seeded once from random_device: no lock on the request path.
  thread_local std::mt19937_64 generator{[] {
    std::random_device device;
    return (static_cast<std::uint64_t>(device()) << 32) ^ device();
  }()};
  char buf[40];
  std::snprintf(buf, sizeof buf, "%016" PRIx64 "%016" PRIx64, generator(), generator());
  return buf;
}

std::string request_id_from(const std::string* header) {
  if (header && valid_request_id(*header)) return *header;
  return new_request_id();
}

}  // namespace onepass::log
