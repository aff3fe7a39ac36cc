#include "otlp/encode.h"

#include <bit>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string_view>

#include "base/version.h"

namespace onepass::otlp {
namespace {

// Field numbers of opentelemetry-proto (v1): collector/trace/v1, trace/v1, common/v1,
// resource/v1.
namespace field {
constexpr int kRequestResourceSpans = 1;  // ExportTraceServiceRequest
constexpr int kResourceSpansResource = 1, kResourceSpansScopeSpans = 2;
constexpr int kResourceAttributes = 1;
constexpr int kScopeSpansScope = 1, kScopeSpansSpans = 2;
constexpr int kScopeName = 1, kScopeVersion = 2;
constexpr int kSpanTraceId = 1, kSpanSpanId = 2, kSpanTraceState = 3, kSpanParentSpanId = 4,
              kSpanName = 5, kSpanKind = 6, kSpanStart = 7, kSpanEnd = 8, kSpanAttributes = 9,
              kSpanLinks = 13, kSpanStatus = 15, kSpanFlags = 16;
constexpr int kLinkTraceId = 1, kLinkSpanId = 2, kLinkTraceState = 3, kLinkFlags = 6;
constexpr int kStatusMessage = 2, kStatusCode = 3;
constexpr int kKeyValueKey = 1, kKeyValueValue = 2;
constexpr int kAnyString = 1, kAnyBool = 2, kAnyInt = 3, kAnyDouble = 4;
}  // namespace field

constexpr std::string_view kScopeName = "onepass";

enum WireType : std::uint32_t { kVarint = 0, kFixed64 = 1, kLength = 2, kFixed32 = 5 };

// Appends protobuf fields to a string. A nested message is written into its own writer first,
// then copied in behind its length (the export thread's cost, never a request's).
class ProtoWriter {
 public:
  void varint(int number, std::uint64_t value) {
    tag(number, kVarint);
    raw_varint(value);
  }
  void fixed64(int number, std::uint64_t value) {
    tag(number, kFixed64);
    for (int i = 0; i < 8; ++i) out_.push_back(static_cast<char>(value >> (8 * i)));
  }
  void fixed32(int number, std::uint32_t value) {
    tag(number, kFixed32);
    for (int i = 0; i < 4; ++i) out_.push_back(static_cast<char>(value >> (8 * i)));
  }
  void bytes(int number, std::string_view value) {
    tag(number, kLength);
    raw_varint(value.size());
    out_.append(value);
  }
  template <std::size_t N>
  void bytes(int number, const std::array<std::uint8_t, N>& id) {
    bytes(number, std::string_view(reinterpret_cast<const char*>(id.data()), N));
  }
  void message(int number, const ProtoWriter& nested) { bytes(number, nested.out_); }
  std::string take() { return std::move(out_); }

 private:
  void tag(int number, WireType type) {
    raw_varint(static_cast<std::uint64_t>(number) << 3 | type);
  }
  void raw_varint(std::uint64_t value) {
    while (value >= 0x80) {
      out_.push_back(static_cast<char>(value | 0x80));
      value >>= 7;
    }
    out_.push_back(static_cast<char>(value));
  }
  std::string out_;
};

ProtoWriter key_value(const trace::Attribute& attribute) {
  ProtoWriter value;
  if (const auto* s = std::get_if<std::string>(&attribute.value)) {
    value.bytes(field::kAnyString, *s);
  } else if (const auto* b = std::get_if<bool>(&attribute.value)) {
    value.varint(field::kAnyBool, *b ? 1 : 0);
  } else if (const auto* i = std::get_if<std::int64_t>(&attribute.value)) {
    value.varint(field::kAnyInt, static_cast<std::uint64_t>(*i));  // int64: two's complement
  } else {
    value.fixed64(field::kAnyDouble,
                  std::bit_cast<std::uint64_t>(std::get<double>(attribute.value)));
  }
  ProtoWriter kv;
  kv.bytes(field::kKeyValueKey, attribute.key);
  kv.message(field::kKeyValueValue, value);
  return kv;
}

template <std::size_t N>
bool is_zero(const std::array<std::uint8_t, N>& id) {
  for (auto b : id)
    if (b != 0) return false;
  return true;
}

ProtoWriter span_message(const trace::SpanData& span) {
  ProtoWriter w;
  w.bytes(field::kSpanTraceId, span.trace_id);
  w.bytes(field::kSpanSpanId, span.span_id);
  if (!span.trace_state.empty()) w.bytes(field::kSpanTraceState, span.trace_state);
  if (!is_zero(span.parent_span_id)) w.bytes(field::kSpanParentSpanId, span.parent_span_id);
  w.bytes(field::kSpanName, span.name);
  w.varint(field::kSpanKind, static_cast<std::uint64_t>(span.kind));
  w.fixed64(field::kSpanStart, span.start_unix_ns);
  w.fixed64(field::kSpanEnd, span.end_unix_ns);
  for (const auto& attribute : span.attributes)
    w.message(field::kSpanAttributes, key_value(attribute));
  for (const auto& link : span.links) {
    ProtoWriter l;
    l.bytes(field::kLinkTraceId, link.trace_id);
    l.bytes(field::kLinkSpanId, link.span_id);
    if (!link.trace_state.empty()) l.bytes(field::kLinkTraceState, link.trace_state);
    l.fixed32(field::kLinkFlags, link.flags);
    w.message(field::kSpanLinks, l);
  }
  if (span.status != trace::StatusCode::kUnset) {
    ProtoWriter status;
    if (!span.status_message.empty()) status.bytes(field::kStatusMessage, span.status_message);
    status.varint(field::kStatusCode, static_cast<std::uint64_t>(span.status));
    w.message(field::kSpanStatus, status);
  }
  w.fixed32(field::kSpanFlags, span_flags(span));
  return w;
}

nlohmann::json json_attributes(const std::vector<trace::Attribute>& attributes) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& attribute : attributes) {
    nlohmann::json value;
    if (const auto* s = std::get_if<std::string>(&attribute.value)) {
      value["stringValue"] = *s;
    } else if (const auto* b = std::get_if<bool>(&attribute.value)) {
      value["boolValue"] = *b;
    } else if (const auto* i = std::get_if<std::int64_t>(&attribute.value)) {
      value["intValue"] = std::to_string(*i);  // proto3 JSON writes 64-bit integers as strings
    } else {
      value["doubleValue"] = std::get<double>(attribute.value);
    }
    out.push_back({{"key", attribute.key}, {"value", std::move(value)}});
  }
  return out;
}

}  // namespace

std::uint32_t span_flags(const trace::SpanData& span) {
  constexpr std::uint32_t kHasIsRemote = 0x100, kIsRemote = 0x200;
  std::uint32_t flags = span.flags | kHasIsRemote;
  if (span.parent_remote) flags |= kIsRemote;
  return flags;
}

std::string encode_protobuf(const Resource& resource, std::span<const trace::SpanData> spans) {
  ProtoWriter resource_message;
  for (const auto& attribute : resource.attributes)
    resource_message.message(field::kResourceAttributes, key_value(attribute));
  ProtoWriter scope;
  scope.bytes(field::kScopeName, kScopeName);
  scope.bytes(field::kScopeVersion, onepass::version());
  ProtoWriter scope_spans;
  scope_spans.message(field::kScopeSpansScope, scope);
  for (const auto& span : spans) scope_spans.message(field::kScopeSpansSpans, span_message(span));
  ProtoWriter resource_spans;
  resource_spans.message(field::kResourceSpansResource, resource_message);
  resource_spans.message(field::kResourceSpansScopeSpans, scope_spans);
  ProtoWriter request;
  request.message(field::kRequestResourceSpans, resource_spans);
  return request.take();
}

std::string encode_json(const Resource& resource, std::span<const trace::SpanData> spans) {
  nlohmann::json json_spans = nlohmann::json::array();
  for (const auto& span : spans) {
    nlohmann::json s = {{"traceId", trace::to_hex(span.trace_id)},
                        {"spanId", trace::to_hex(span.span_id)},
                        {"name", span.name},
                        {"kind", static_cast<int>(span.kind)},
                        {"startTimeUnixNano", std::to_string(span.start_unix_ns)},
                        {"endTimeUnixNano", std::to_string(span.end_unix_ns)},
                        {"attributes", json_attributes(span.attributes)},
                        {"flags", span_flags(span)}};
    if (!span.trace_state.empty()) s["traceState"] = span.trace_state;
    if (!is_zero(span.parent_span_id)) s["parentSpanId"] = trace::to_hex(span.parent_span_id);
    if (!span.links.empty()) {
      nlohmann::json links = nlohmann::json::array();
      for (const auto& link : span.links) {
        nlohmann::json l = {{"traceId", trace::to_hex(link.trace_id)},
                            {"spanId", trace::to_hex(link.span_id)},
                            {"flags", link.flags}};
        if (!link.trace_state.empty()) l["traceState"] = link.trace_state;
        links.push_back(std::move(l));
      }
      s["links"] = std::move(links);
    }
    if (span.status != trace::StatusCode::kUnset) {
      s["status"] = {{"code", static_cast<int>(span.status)}};
      if (!span.status_message.empty()) s["status"]["message"] = span.status_message;
    }
    json_spans.push_back(std::move(s));
  }
  nlohmann::json request = {
      {"resourceSpans",
       {{{"resource", {{"attributes", json_attributes(resource.attributes)}}},
         {"scopeSpans",
          {{{"scope", {{"name", kScopeName}, {"version", std::string(onepass::version())}}},
            {"spans", std::move(json_spans)}}}}}}}};
  // Invalid UTF-8 (a client's text in a status message) is replaced, never thrown on.
  return request.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace onepass::otlp
