#include "http/wire.h"

#include <boost/asio/error.hpp>
#include <boost/beast/core/error.hpp>
#include <boost/beast/core/string.hpp>

namespace onepass::http::wire {

namespace beast = boost::beast;
namespace bhttp = boost::beast::http;

namespace {

std::string_view sv(beast::string_view s) { return {s.data(), s.size()}; }

std::string lower(std::string_view s) {
  std::string out(s);
  for (auto& c : out)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  return out;
}

}  // namespace

void limit_parser(RequestParser& parser, const ServerOptions& options) {
  parser.header_limit(static_cast<std::uint32_t>(options.header_limit_bytes));
  parser.body_limit(options.payload_limit_bytes);
}

std::optional<Refusal> check_header(const RequestParser& parser, const ServerOptions& options) {
  const auto& msg = parser.get();
  std::size_t count = 0;
  for (auto it = msg.begin(); it != msg.end(); ++it) ++count;
  if (count > options.max_header_count) return Refusal{431, "too many header fields"};
  // Beast already refuses a Content-Length above body_limit while parsing the header; this
  // keeps the rule explicit should that ever change.
  if (const auto length = parser.content_length(); length && *length > options.payload_limit_bytes)
    return Refusal{413, "request body is larger than the payload limit"};
  return std::nullopt;
}

bool expects_continue(const RequestParser& parser) {
  const auto expect = parser.get()[bhttp::field::expect];
  return !expect.empty() && beast::iequals(expect, "100-continue");
}

Refusal classify_read_error(const boost::system::error_code& ec) {
  if (ec == bhttp::error::header_limit) return {431, "request header fields too large"};
  if (ec == bhttp::error::body_limit) return {413, "request body is larger than the payload limit"};
  if (ec == bhttp::error::end_of_stream || ec == bhttp::error::partial_message ||
      ec == beast::error::timeout || ec == boost::asio::error::operation_aborted)
    return {};
  if (ec.category() == make_error_code(bhttp::error::bad_method).category())
    return {400, std::string("malformed request: ") + ec.message()};
  return {};
}

std::string target_of(const RequestParser& parser) {
  return std::string(sv(parser.get().target()));
}

Request take_request(RequestParser& parser, std::chrono::steady_clock::time_point received) {
  auto msg = parser.release();
  Request request;
  request.method = std::string(sv(msg.method_string()));
  request.target = std::string(sv(msg.target()));
  request.received = received;
  request.headers.reserve(8);
  for (const auto& field : msg)
    request.headers.push_back({lower(sv(field.name_string())), std::string(sv(field.value()))});
  request.body = std::move(msg.body());
  return request;
}

void fill_response(WireResponse& out, Response response, bool keep_alive) {
  out = {};
  out.result(static_cast<unsigned>(response.status));
  out.version(11);
  out.set(bhttp::field::server, "onepass");
  if (!response.content_type.empty()) out.set(bhttp::field::content_type, response.content_type);
  for (const auto& h : response.headers) out.set(h.name, h.value);
  out.body() = std::move(response.body);
  out.keep_alive(keep_alive);
  out.prepare_payload();
}

}  // namespace onepass::http::wire
