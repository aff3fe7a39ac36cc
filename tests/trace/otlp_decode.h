// The tests' own reading of an OTLP ExportTraceServiceRequest, independent of src/otlp's
// writer: a generic protobuf wire-format reader (varint, fixed32/64, length-delimited) walked by
// opentelemetry-proto's field numbers, and nlohmann/json for OTLP/JSON. Both land in the same
// plain structure, so one assertion checks either encoding.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tests/trace/otlp_receiver.h"

namespace onepass::testing {

struct DecodedSpan {
  std::string trace_id, span_id, parent_span_id;  // lower-case hex; empty when absent
  std::string trace_state;
  std::string name;
  int kind = 0;
  std::uint64_t start_unix_ns = 0, end_unix_ns = 0;
  // Values as text: strings as they are, integers in decimal, booleans true/false, doubles
  // with std::to_string.
  std::map<std::string, std::string> attributes;
  std::vector<std::pair<std::string, std::string>> links;  // (trace id, span id)
  int status_code = 0;
  std::string status_message;
  std::uint32_t flags = 0;
};

struct DecodedExport {
  std::map<std::string, std::string> resource;
  std::string scope_name;
  std::vector<DecodedSpan> spans;
};

// Throw std::runtime_error on a malformed message.
DecodedExport decode_protobuf(std::string_view body);
DecodedExport decode_json(std::string_view body);
// By the POST's Content-Type.
DecodedExport decode(const ReceivedExport& received);

// Every span of every export, in arrival order.
std::vector<DecodedSpan> all_spans(const std::vector<ReceivedExport>& exports);

}  // namespace onepass::testing
