// OTLP's ExportTraceServiceRequest (opentelemetry-proto, collector/trace/v1) in its two HTTP
// encodings: binary protobuf (http/protobuf) written field by field, and OTLP/JSON (http/json:
// proto3's JSON mapping with hex ids, lowerCamelCase names and enum numbers). One resource, one
// instrumentation scope ("onepass"), the spans in the order given.
#pragma once

#include <span>
#include <string>
#include <vector>

#include "trace/span.h"

namespace onepass::otlp {

// The process's resource (service.name and the rest of OTEL_RESOURCE_ATTRIBUTES).
struct Resource {
  std::vector<trace::Attribute> attributes;
};

std::string encode_protobuf(const Resource& resource, std::span<const trace::SpanData> spans);
std::string encode_json(const Resource& resource, std::span<const trace::SpanData> spans);

// Span.flags: the W3C trace flags in bits 0-7, and bits 8 and 9 saying whether the parent is
// known to be local or remote (SPAN_FLAGS_CONTEXT_HAS_IS_REMOTE_MASK, _IS_REMOTE_MASK).
std::uint32_t span_flags(const trace::SpanData& span);

}  // namespace onepass::otlp
