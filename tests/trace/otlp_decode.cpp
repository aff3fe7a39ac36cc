#include "tests/trace/otlp_decode.h"

#include <bit>
#include <nlohmann/json.hpp>
#include <stdexcept>

namespace onepass::testing {
namespace {

struct Field {
  int number = 0;
  int wire = 0;
  std::uint64_t number_value = 0;  // varint, fixed32, fixed64
  std::string_view bytes;          // length-delimited
};

std::uint64_t read_varint(std::string_view& in) {
  std::uint64_t value = 0;
  for (int shift = 0; shift < 64; shift += 7) {
    if (in.empty()) throw std::runtime_error("truncated varint");
    const auto byte = static_cast<std::uint8_t>(in.front());
    in.remove_prefix(1);
    value |= static_cast<std::uint64_t>(byte & 0x7f) << shift;
    if ((byte & 0x80) == 0) return value;
  }
  throw std::runtime_error("varint too long");
}

std::uint64_t read_fixed(std::string_view& in, int bytes) {
  if (in.size() < static_cast<std::size_t>(bytes)) throw std::runtime_error("truncated fixed");
  std::uint64_t value = 0;
  for (int i = 0; i < bytes; ++i)
    value |= static_cast<std::uint64_t>(static_cast<std::uint8_t>(in[i])) << (8 * i);
  in.remove_prefix(bytes);
  return value;
}

std::vector<Field> fields(std::string_view in) {
  std::vector<Field> out;
  while (!in.empty()) {
    const std::uint64_t key = read_varint(in);
    Field f;
    f.number = static_cast<int>(key >> 3);
    f.wire = static_cast<int>(key & 7);
    switch (f.wire) {
      case 0:
        f.number_value = read_varint(in);
        break;
      case 1:
        f.number_value = read_fixed(in, 8);
        break;
      case 5:
        f.number_value = read_fixed(in, 4);
        break;
      case 2: {
        const std::uint64_t size = read_varint(in);
        if (size > in.size()) throw std::runtime_error("truncated bytes");
        f.bytes = in.substr(0, size);
        in.remove_prefix(size);
        break;
      }
      default:
        throw std::runtime_error("unexpected wire type " + std::to_string(f.wire));
    }
    out.push_back(f);
  }
  return out;
}

std::string hex(std::string_view bytes) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  for (char c : bytes) {
    const auto b = static_cast<std::uint8_t>(c);
    out.push_back(kDigits[b >> 4]);
    out.push_back(kDigits[b & 15]);
  }
  return out;
}

// KeyValue { key = 1; AnyValue value = 2 }, AnyValue { string 1, bool 2, int 3, double 4 }.
std::pair<std::string, std::string> key_value(std::string_view message) {
  std::pair<std::string, std::string> kv;
  for (const Field& f : fields(message)) {
    if (f.number == 1) kv.first = std::string(f.bytes);
    if (f.number != 2) continue;
    for (const Field& v : fields(f.bytes)) {
      if (v.number == 1) kv.second = std::string(v.bytes);
      if (v.number == 2) kv.second = v.number_value ? "true" : "false";
      if (v.number == 3) kv.second = std::to_string(static_cast<std::int64_t>(v.number_value));
      if (v.number == 4) kv.second = std::to_string(std::bit_cast<double>(v.number_value));
    }
  }
  return kv;
}

DecodedSpan proto_span(std::string_view message) {
  DecodedSpan span;
  for (const Field& f : fields(message)) {
    switch (f.number) {
      case 1:
        span.trace_id = hex(f.bytes);
        break;
      case 2:
        span.span_id = hex(f.bytes);
        break;
      case 3:
        span.trace_state = std::string(f.bytes);
        break;
      case 4:
        span.parent_span_id = hex(f.bytes);
        break;
      case 5:
        span.name = std::string(f.bytes);
        break;
      case 6:
        span.kind = static_cast<int>(f.number_value);
        break;
      case 7:
        span.start_unix_ns = f.number_value;
        break;
      case 8:
        span.end_unix_ns = f.number_value;
        break;
      case 9:
        span.attributes.insert(key_value(f.bytes));
        break;
      case 13: {
        std::pair<std::string, std::string> link;
        for (const Field& l : fields(f.bytes)) {
          if (l.number == 1) link.first = hex(l.bytes);
          if (l.number == 2) link.second = hex(l.bytes);
        }
        span.links.push_back(link);
        break;
      }
      case 15:
        for (const Field& s : fields(f.bytes)) {
          if (s.number == 2) span.status_message = std::string(s.bytes);
          if (s.number == 3) span.status_code = static_cast<int>(s.number_value);
        }
        break;
      case 16:
        span.flags = static_cast<std::uint32_t>(f.number_value);
        break;
      default:
        break;
    }
  }
  return span;
}

std::string json_value(const nlohmann::json& value) {
  if (value.contains("stringValue")) return value["stringValue"].get<std::string>();
  if (value.contains("boolValue")) return value["boolValue"].get<bool>() ? "true" : "false";
  if (value.contains("intValue")) {
    const auto& v = value["intValue"];
    return v.is_string() ? v.get<std::string>() : std::to_string(v.get<std::int64_t>());
  }
  if (value.contains("doubleValue")) return std::to_string(value["doubleValue"].get<double>());
  return {};
}

std::map<std::string, std::string> json_attributes(const nlohmann::json& list) {
  std::map<std::string, std::string> out;
  for (const auto& kv : list) out[kv.at("key").get<std::string>()] = json_value(kv.at("value"));
  return out;
}

}  // namespace

DecodedExport decode_protobuf(std::string_view body) {
  DecodedExport out;
  for (const Field& resource_spans : fields(body)) {
    if (resource_spans.number != 1) continue;
    for (const Field& rs : fields(resource_spans.bytes)) {
      if (rs.number == 1) {
        for (const Field& attribute : fields(rs.bytes))
          if (attribute.number == 1) out.resource.insert(key_value(attribute.bytes));
      }
      if (rs.number != 2) continue;
      for (const Field& ss : fields(rs.bytes)) {
        if (ss.number == 1) {
          for (const Field& scope : fields(ss.bytes))
            if (scope.number == 1) out.scope_name = std::string(scope.bytes);
        }
        if (ss.number == 2) out.spans.push_back(proto_span(ss.bytes));
      }
    }
  }
  return out;
}

DecodedExport decode_json(std::string_view body) {
  DecodedExport out;
  const auto request = nlohmann::json::parse(body);
  for (const auto& rs : request.at("resourceSpans")) {
    out.resource = json_attributes(rs.at("resource").at("attributes"));
    for (const auto& ss : rs.at("scopeSpans")) {
      out.scope_name = ss.at("scope").at("name").get<std::string>();
      for (const auto& s : ss.at("spans")) {
        DecodedSpan span;
        span.trace_id = s.at("traceId").get<std::string>();
        span.span_id = s.at("spanId").get<std::string>();
        span.parent_span_id = s.value("parentSpanId", "");
        span.trace_state = s.value("traceState", "");
        span.name = s.at("name").get<std::string>();
        span.kind = s.at("kind").get<int>();
        span.start_unix_ns = std::stoull(s.at("startTimeUnixNano").get<std::string>());
        span.end_unix_ns = std::stoull(s.at("endTimeUnixNano").get<std::string>());
        span.attributes = json_attributes(s.at("attributes"));
        for (const auto& l : s.value("links", nlohmann::json::array()))
          span.links.emplace_back(l.at("traceId").get<std::string>(),
                                  l.at("spanId").get<std::string>());
        if (s.contains("status")) {
          span.status_code = s["status"].value("code", 0);
          span.status_message = s["status"].value("message", "");
        }
        span.flags = s.value("flags", 0u);
        out.spans.push_back(std::move(span));
      }
    }
  }
  return out;
}

DecodedExport decode(const ReceivedExport& received) {
  if (received.content_type == "application/json") return decode_json(received.body);
  if (received.content_type == "application/x-protobuf") return decode_protobuf(received.body);
  throw std::runtime_error("unexpected content type " + received.content_type);
}

std::vector<DecodedSpan> all_spans(const std::vector<ReceivedExport>& exports) {
  std::vector<DecodedSpan> spans;
  for (const auto& received : exports) {
    auto decoded = decode(received);
    spans.insert(spans.end(), decoded.spans.begin(), decoded.spans.end());
  }
  return spans;
}

}  // namespace onepass::testing
