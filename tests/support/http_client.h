// A small synchronous HTTP/1.1 client for the server tests (Beast), plus raw-socket helpers for
// requests no well-behaved client would send.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace onepass::testing {

struct HttpResult {
  int status = 0;
  std::map<std::string, std::string> headers;  // lower-case names
  std::string body;
  bool closed = false;  // the server asked to close (Connection: close)
  std::string header(const std::string& lower_name) const {
    auto it = headers.find(lower_name);
    return it == headers.end() ? std::string() : it->second;
  }
};

struct HttpHeaders {
  std::vector<std::pair<std::string, std::string>> fields;
};

// One request on a fresh connection. `content_type` empty: no Content-Type header.
HttpResult http_request(std::uint16_t port, const std::string& method, const std::string& target,
                        const std::string& body = {},
                        const std::string& content_type = "application/json",
                        const HttpHeaders& headers = {});

// Selects a co-hosted model the SageMaker way (docs/api.md: target header).
inline HttpHeaders target(const std::string& model) {
  return HttpHeaders{{{"X-Amzn-SageMaker-Target-Model", model}}};
}

inline HttpResult post_json(std::uint16_t port, const std::string& target, const std::string& body,
                            const HttpHeaders& headers = {}) {
  return http_request(port, "POST", target, body, "application/json", headers);
}
inline HttpResult get(std::uint16_t port, const std::string& target,
                      const HttpHeaders& headers = {}) {
  return http_request(port, "GET", target, {}, {}, headers);
}

// A keep-alive connection for several requests in a row.
class HttpConnection {
 public:
  explicit HttpConnection(std::uint16_t port);
  ~HttpConnection();
  HttpResult request(const std::string& method, const std::string& target,
                     const std::string& body = {},
                     const std::string& content_type = "application/json",
                     const HttpHeaders& headers = {});

 private:
  struct Impl;
  Impl* impl_;
};

// Writes `raw` bytes and reads until the server closes or `timeout_ms` passes; returns what
// came back (possibly empty).
std::string raw_exchange(std::uint16_t port, const std::string& raw, int timeout_ms = 3000);

// Parses the status code of a raw response; 0 when there is none.
int raw_status(const std::string& response);

}  // namespace onepass::testing
