// W3C Trace Context (https://www.w3.org/TR/trace-context/): the ids a span carries, the
// `traceparent` header that hands them from a caller to this server, and the `tracestate` that
// travels beside it. Parsed at the HTTP edge (src/api) into a SpanContext; below it only the
// ids and the sampled flag exist.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace onepass::trace {

using TraceId = std::array<std::uint8_t, 16>;  // all zero: invalid
using SpanId = std::array<std::uint8_t, 8>;    // all zero: invalid

inline constexpr std::uint8_t kSampledFlag = 0x01;

struct SpanContext {
  TraceId trace_id{};
  SpanId span_id{};
  std::uint8_t flags = 0;   // W3C trace-flags; bit 0 is "sampled"
  std::string trace_state;  // the caller's tracestate, passed on unchanged
  bool remote = false;      // came from a traceparent header

  bool valid() const;
  bool sampled() const { return (flags & kSampledFlag) != 0; }
};

// Lower-case hex of an id (32 or 16 characters).
std::string to_hex(const TraceId& id);
std::string to_hex(const SpanId& id);

// Parses a traceparent header value: "00-<32 hex>-<16 hex>-<2 hex>" (version 00, or a later
// version, whose extra fields after a '-' are ignored as the specification asks). Upper-case hex,
// all-zero ids, version ff or a wrong length give nullopt: the request then starts a new trace.
std::optional<SpanContext> parse_traceparent(std::string_view header);
// "00-<trace id>-<span id>-<flags>".
std::string format_traceparent(const SpanContext& context);

// The tracestate header as it may be passed on: at most 32 list members of key=value, at most
// 512 characters (the specification lets a vendor drop a longer one whole); empty members are
// dropped. nullopt when a member is malformed, and the header is then ignored.
std::optional<std::string> parse_tracestate(std::string_view header);

// Random non-zero ids from a per-thread generator seeded from the system's entropy (ids need
// to be unique, not secret).
TraceId random_trace_id();
SpanId random_span_id();

// The caller's context from the values of its `traceparent` and `tracestate` headers (or gRPC
// metadata; null when absent): nullopt without a valid traceparent; a tracestate that does not
// parse is dropped.
std::optional<SpanContext> caller_context(const std::string* traceparent,
                                          const std::string* tracestate);

}  // namespace onepass::trace
