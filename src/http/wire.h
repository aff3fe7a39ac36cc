// The server's HTTP/1.1 wire rules, apart from any socket: how the Beast parser is limited, what
// is checked once a header is complete, which read errors become which status, how a parsed
// message becomes an http::Request and how a Response goes back on the wire. server.cpp applies
// them to connections; the HTTP request fuzz target (src/api/fuzz/http_request_fuzz.cpp) applies
// them to bytes in memory, so both run the same rules. It exposes Beast types: nothing but the
// server and that fuzz target includes it.
#pragma once

#include <boost/beast/http.hpp>
#include <chrono>
#include <optional>
#include <string>

#include "http/message.h"
#include "http/server.h"

namespace onepass::http::wire {

using RequestParser = boost::beast::http::request_parser<boost::beast::http::string_body>;
using WireResponse = boost::beast::http::response<boost::beast::http::string_body>;

// A request the transport answers itself. status 0: close the connection without an answer
// (the client went away, timed out, or sent only part of a message).
struct Refusal {
  int status = 0;
  std::string message;
};

// A fresh parser with the header and body limits of `options`.
void limit_parser(RequestParser& parser, const ServerOptions& options);

// Checks once the header is complete, before any body byte is read: header count (431) and a
// declared Content-Length above the payload limit (413).
std::optional<Refusal> check_header(const RequestParser& parser, const ServerOptions& options);

// Whether the client waits for "100 Continue" before sending the body.
bool expects_continue(const RequestParser& parser);

// What a failed read means: 431 header too large, 413 body too large, 400 malformed (framing
// errors such as conflicting Content-Length and Transfer-Encoding), else close quietly.
Refusal classify_read_error(const boost::system::error_code& ec);

// The request target as parsed so far ("" before the start line is complete).
std::string target_of(const RequestParser& parser);

// Takes the complete message out of `parser`: method, target, lower-case header names, body.
Request take_request(RequestParser& parser, std::chrono::steady_clock::time_point received);

// The wire form of `response`; `keep_alive` false adds Connection: close.
void fill_response(WireResponse& out, Response response, bool keep_alive);

}  // namespace onepass::http::wire
