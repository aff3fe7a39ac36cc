// libFuzzer target: arbitrary bytes as what a client sends on one connection before closing it.
// They go through the server's own wire rules (http/wire.h: the Beast parser with the server's
// limits, the header checks, the read-error statuses), then api::Api's routing, authentication,
// model selection and dialects over a FakeService, and each answer goes back through the
// server's response writer. No socket: the bytes are fed to the parser the way the server's
// reads feed it, pipelined requests included. Checked for every answer: api_fuzz_common.h's
// rules, and that the bytes on the wire parse back as exactly one HTTP response with the same
// status and body (no header injection, no broken framing).
//
// The limits are the server's options, set small (header 1 KiB, 16 fields, body 2 KiB) so that
// inputs of a few KiB reach them.
#include <boost/beast/core/buffers_to_string.hpp>
#include <boost/beast/http.hpp>
#include <sstream>

#include "api/fuzz/api_fuzz_endpoint.h"
#include "http/wire.h"

namespace {

namespace bhttp = boost::beast::http;
using namespace onepass;
using api::fuzzing::check;
using api::fuzzing::Endpoint;

http::ServerOptions fuzz_server_options() {
  http::ServerOptions options;
  options.header_limit_bytes = 1024;
  options.max_header_count = 16;
  options.payload_limit_bytes = 2048;
  return options;
}

// Writes `response` as the server does and parses the bytes back as a client would.
void check_on_the_wire(const http::Response& response, bool keep_alive) {
  api::fuzzing::check_response(response);
  http::wire::WireResponse out;
  http::wire::fill_response(out, response, keep_alive);
  std::ostringstream bytes;
  bytes << out;
  const std::string wire = bytes.str();
  bhttp::response_parser<bhttp::string_body> parser;
  parser.eager(true);
  boost::system::error_code ec;
  const std::size_t used = parser.put(boost::asio::buffer(wire), ec);
  check(!ec && parser.is_done() && used == wire.size());
  check(parser.get().result_int() == static_cast<unsigned>(response.status));
  check(parser.get().body() == response.body);
  check(parser.get().keep_alive() == keep_alive);
}

// Feeds `in` to `parser` until the header (or the whole message) is complete. The peer sent
// nothing after `in`, so running out of bytes is the end of the stream, as in the server's read.
boost::system::error_code feed(http::wire::RequestParser& parser, std::string_view& in,
                               bool whole_message) {
  const auto reached = [&] { return whole_message ? parser.is_done() : parser.is_header_done(); };
  const auto end_of_stream = [&]() -> boost::system::error_code {
    if (!parser.got_some()) return bhttp::error::end_of_stream;
    boost::system::error_code ec;
    parser.put_eof(ec);
    if (ec) return ec;
    return reached() ? boost::system::error_code{} : bhttp::error::partial_message;
  };
  while (!reached()) {
    if (in.empty()) return end_of_stream();
    boost::system::error_code ec;
    const std::size_t used = parser.put(boost::asio::buffer(in.data(), in.size()), ec);
    in.remove_prefix(used);
    if (ec == bhttp::error::need_more) {
      // Everything left was offered: the parser needs bytes that will never come.
      if (used == 0) return end_of_stream();
      continue;
    }
    if (ec) return ec;
  }
  return {};
}

// One connection: requests are read and answered until the input ends, a request asks to
// close, or the transport refuses one (which closes the connection).
void serve_connection(Endpoint& endpoint, std::string_view in) {
  const auto options = fuzz_server_options();
  for (int served = 0; served < 8 && !in.empty(); ++served) {
    http::wire::RequestParser parser;
    http::wire::limit_parser(parser, options);
    auto refuse = [&](const http::wire::Refusal& refusal) {
      if (refusal.status == 0) return;
      auto response = endpoint.api->transport_error(refusal.status, http::wire::target_of(parser),
                                                    refusal.message);
      response.close = true;
      check_on_the_wire(response, false);
    };
    if (auto ec = feed(parser, in, false)) return refuse(http::wire::classify_read_error(ec));
    if (auto refusal = http::wire::check_header(parser, options)) return refuse(*refusal);
    (void)http::wire::expects_continue(parser);  // the 100 Continue itself is fixed text
    if (auto ec = feed(parser, in, true)) return refuse(http::wire::classify_read_error(ec));
    const bool keep_alive = parser.get().keep_alive();
    http::Request request = http::wire::take_request(parser, std::chrono::steady_clock::now());
    const http::Response response = endpoint.exchange(std::move(request));
    const bool keep = keep_alive && !response.close;
    check_on_the_wire(response, keep);
    if (!keep) return;
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  // Three models and no key; one model behind an API key (model management on in both).
  static Endpoint* open = new Endpoint({"nli", "rerank", "embed"}, api::fuzzing::fuzz_options());
  static Endpoint* keyed = [] {
    auto options = api::fuzzing::fuzz_options();
    options.api_key = "fuzz-key";
    return new Endpoint({"nli"}, options);
  }();
  const std::string_view in(reinterpret_cast<const char*>(data), size);
  serve_connection(*open, in);
  serve_connection(*keyed, in);
  return 0;
}
