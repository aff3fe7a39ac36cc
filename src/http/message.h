// Plain HTTP request/response values that cross the transport boundary. The server (server.h)
// parses the wire format into these and back; the API layer never sees Beast or Asio types.
#pragma once

#include <chrono>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace onepass::http {

struct Header {
  std::string name;  // lower case in requests
  std::string value;
};

struct Request {
  std::string method;  // as sent, e.g. "GET"
  std::string target;  // raw request target, query included
  std::vector<Header> headers;
  std::string body;
  std::chrono::steady_clock::time_point received{};  // when the header was complete

  // The path part of the target (before '?'), still percent-encoded.
  std::string_view path() const;
  // First header with this lower-case name, or nullptr.
  const std::string* header(std::string_view lower_name) const;
};

struct Response {
  int status = 200;
  std::string content_type = "application/json";
  std::vector<Header> headers;
  std::string body;
  bool close = false;  // send Connection: close and close after writing
};

// Sends the response for one request. Callable from any thread, exactly once; the call only
// posts the write to the connection's executor and returns at once.
using Respond = std::function<void(Response)>;

// Called on an I/O thread for each complete request. Must not block: it answers through
// `respond`, now or later from another thread.
using Handler = std::function<void(Request, Respond)>;

// Builds the body of an error the transport itself decides (413, 431, 400 framing, 503 while
// draining) so that each route keeps its dialect's error shape. `target` may be partial.
using ErrorResponder =
    std::function<Response(int status, std::string_view target, std::string_view message)>;

}  // namespace onepass::http
