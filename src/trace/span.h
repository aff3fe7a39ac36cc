// A finished span as the exporter sends it: OTLP's Span message in native types. The server
// records spans after the fact (it knows each phase's start and end from its own timestamps), so
// there is no live span object on the hot path: a hook fills a SpanData and hands it to the
// Tracer (tracer.h) once the phase is over.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "trace/context.h"

namespace onepass::trace {

enum class SpanKind : int { kInternal = 1, kServer = 2, kClient = 3 };  // OTLP's numbers
enum class StatusCode : int { kUnset = 0, kOk = 1, kError = 2 };

using AttributeValue = std::variant<std::string, std::int64_t, double, bool>;

struct Attribute {
  std::string key;
  AttributeValue value;
};

struct Link {
  TraceId trace_id{};
  SpanId span_id{};
  std::string trace_state;
  std::uint8_t flags = 0;
};

struct SpanData {
  TraceId trace_id{};
  SpanId span_id{};
  SpanId parent_span_id{};  // all zero: a root span
  bool parent_remote = false;
  std::string trace_state;
  std::uint8_t flags = 0;
  std::string name;
  SpanKind kind = SpanKind::kInternal;
  std::uint64_t start_unix_ns = 0;
  std::uint64_t end_unix_ns = 0;
  std::vector<Attribute> attributes;
  std::vector<Link> links;
  StatusCode status = StatusCode::kUnset;
  std::string status_message;

  SpanData& set(std::string key, std::string_view value) {
    attributes.push_back({std::move(key), std::string(value)});
    return *this;
  }
  SpanData& set(std::string key, const char* value) {
    return set(std::move(key), std::string_view(value));
  }
  SpanData& set(std::string key, std::int64_t value) {
    attributes.push_back({std::move(key), value});
    return *this;
  }
  SpanData& set(std::string key, std::size_t value) {
    return set(std::move(key), static_cast<std::int64_t>(value));
  }
  SpanData& set(std::string key, int value) { return set(std::move(key), std::int64_t{value}); }
  SpanData& set(std::string key, double value) {
    attributes.push_back({std::move(key), value});
    return *this;
  }
  SpanData& set(std::string key, bool value) {
    attributes.push_back({std::move(key), value});
    return *this;
  }
};

// Nanoseconds since the Unix epoch of a steady-clock instant (the runtime's timestamps), through
// the system clock's current offset.
inline std::uint64_t unix_nanos(std::chrono::steady_clock::time_point at) {
  const auto system_now = std::chrono::system_clock::now();
  const auto steady_now = std::chrono::steady_clock::now();
  const auto since_epoch = system_now.time_since_epoch() - (steady_now - at);
  return static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(since_epoch).count());
}

// A span of `context` (its trace and span ids, tracestate and flags) from `start` to `end`
// under `parent_span_id`: what every span the server writes starts from.
inline SpanData span_of(const SpanContext& context, const SpanId& parent_span_id, std::string name,
                        std::chrono::steady_clock::time_point start,
                        std::chrono::steady_clock::time_point end) {
  SpanData span;
  span.trace_id = context.trace_id;
  span.span_id = context.span_id;
  span.parent_span_id = parent_span_id;
  span.trace_state = context.trace_state;
  span.flags = context.flags;
  span.name = std::move(name);
  span.start_unix_ns = unix_nanos(start);
  span.end_unix_ns = unix_nanos(end < start ? start : end);
  return span;
}

// A new child span of `parent`, in its trace.
inline SpanData child_span(const SpanContext& parent, std::string name,
                           std::chrono::steady_clock::time_point start,
                           std::chrono::steady_clock::time_point end) {
  SpanContext child = parent;
  child.span_id = random_span_id();
  return span_of(child, parent.span_id, std::move(name), start, end);
}

}  // namespace onepass::trace
