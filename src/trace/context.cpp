#include "trace/context.h"

#include <algorithm>
#include <random>

namespace onepass::trace {
namespace {

constexpr char kHexDigits[] = "0123456789abcdef";

template <std::size_t N>
std::string hex(const std::array<std::uint8_t, N>& bytes) {
  std::string out(2 * N, '0');
  for (std::size_t i = 0; i < N; ++i) {
    out[2 * i] = kHexDigits[bytes[i] >> 4];
    out[2 * i + 1] = kHexDigits[bytes[i] & 0x0f];
  }
  return out;
}

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;  // upper case is invalid in traceparent
}

// Lower-case hex of exactly 2 * N characters into `out`; false otherwise.
template <std::size_t N>
bool parse_hex(std::string_view text, std::array<std::uint8_t, N>& out) {
  if (text.size() != 2 * N) return false;
  for (std::size_t i = 0; i < N; ++i) {
    const int high = hex_value(text[2 * i]);
    const int low = hex_value(text[2 * i + 1]);
    if (high < 0 || low < 0) return false;
    out[i] = static_cast<std::uint8_t>(high << 4 | low);
  }
  return true;
}

template <std::size_t N>
bool all_zero(const std::array<std::uint8_t, N>& bytes) {
  return std::all_of(bytes.begin(), bytes.end(), [](std::uint8_t b) { return b == 0; });
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

// A tracestate key: lcalpha (lcalpha|digit|_|-|*|/)* up to 256, optionally tenant@system.
bool valid_key(std::string_view key) {
  if (key.empty() || key.size() > 256) return false;
  const auto ok = [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '-' || c == '*' ||
           c == '/' || c == '@';
  };
  if (!((key[0] >= 'a' && key[0] <= 'z') || (key[0] >= '0' && key[0] <= '9'))) return false;
  return std::all_of(key.begin(), key.end(), ok) && std::count(key.begin(), key.end(), '@') <= 1;
}

// A value: printable ASCII but ',' and '=', at most 256, not ending in a space.
bool valid_value(std::string_view value) {
  if (value.empty() || value.size() > 256 || value.back() == ' ') return false;
  return std::all_of(value.begin(), value.end(),
                     [](char c) { return c >= 0x20 && c <= 0x7e && c != ',' && c != '='; });
}

std::mt19937_64& generator() {
  thread_local std::mt19937_64 engine = [] {
    std::random_device device;
    std::seed_seq seed{device(), device(), device(), device()};
    return std::mt19937_64(seed);
  }();
  return engine;
}

template <std::size_t N>
std::array<std::uint8_t, N> random_id() {
  std::array<std::uint8_t, N> id{};
  do {
    for (std::size_t i = 0; i < N; i += 8) {
      std::uint64_t bits = generator()();
      for (std::size_t j = 0; j < 8 && i + j < N; ++j, bits >>= 8)
        id[i + j] = static_cast<std::uint8_t>(bits);
    }
  } while (all_zero(id));
  return id;
}

}  // namespace

bool SpanContext::valid() const { return !all_zero(trace_id) && !all_zero(span_id); }

std::string to_hex(const TraceId& id) { return hex(id); }
std::string to_hex(const SpanId& id) { return hex(id); }

std::optional<SpanContext> parse_traceparent(std::string_view header) {
  header = trim(header);
  // version "-" trace-id "-" parent-id "-" flags: 2 + 1 + 32 + 1 + 16 + 1 + 2.
  constexpr std::size_t kLength = 55;
  if (header.size() < kLength) return std::nullopt;
  std::array<std::uint8_t, 1> version{};
  if (!parse_hex(header.substr(0, 2), version) || version[0] == 0xff) return std::nullopt;
  if (header[2] != '-' || header[35] != '-' || header[52] != '-') return std::nullopt;
  // Version 00 is exactly this long; a later version may append "-..." fields.
  if (header.size() > kLength && (version[0] == 0 || header[kLength] != '-')) return std::nullopt;
  SpanContext context;
  std::array<std::uint8_t, 1> flags{};
  if (!parse_hex(header.substr(3, 32), context.trace_id) ||
      !parse_hex(header.substr(36, 16), context.span_id) ||
      !parse_hex(header.substr(53, 2), flags) || !context.valid())
    return std::nullopt;
  context.flags = flags[0];
  context.remote = true;
  return context;
}

std::string format_traceparent(const SpanContext& context) {
  std::array<std::uint8_t, 1> flags{context.flags};
  return "00-" + hex(context.trace_id) + "-" + hex(context.span_id) + "-" + hex(flags);
}

std::optional<std::string> parse_tracestate(std::string_view header) {
  if (header.size() > 512) return std::string();
  std::string out;
  std::size_t members = 0;
  while (true) {
    const auto comma = header.find(',');
    const std::string_view member = trim(header.substr(0, comma));
    if (!member.empty()) {
      const auto eq = member.find('=');
      if (eq == std::string_view::npos || !valid_key(member.substr(0, eq)) ||
          !valid_value(member.substr(eq + 1)))
        return std::nullopt;
      if (++members > 32) return std::nullopt;
      if (!out.empty()) out += ',';
      out += member;
    }
    if (comma == std::string_view::npos) break;
    header.remove_prefix(comma + 1);
  }
  return out;
}

TraceId random_trace_id() { return random_id<16>(); }
SpanId random_span_id() { return random_id<8>(); }

std::optional<SpanContext> caller_context(const std::string* traceparent,
                                          const std::string* tracestate) {
  if (traceparent == nullptr) return std::nullopt;
  std::optional<SpanContext> parent = parse_traceparent(*traceparent);
  if (parent && tracestate != nullptr)
    parent->trace_state = parse_tracestate(*tracestate).value_or("");
  return parent;
}

}  // namespace onepass::trace
