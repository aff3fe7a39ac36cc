// HTTP/1.1 client for the benchmark and the Hub downloads: plain TCP, or TLS through OpenSSL for
// https:// (certificates verified against the system store, or SSL_CERT_FILE / SSL_CERT_DIR as
// OpenSSL reads them, and the host name checked), one keep-alive connection per object.
// Transport only: it knows methods, headers and bodies, never a dialect. The load generator gives
// each worker thread its own Connection, so a Connection is not thread-safe and needs no lock.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/error.h"

struct ssl_st;
struct ssl_ctx_st;

namespace onepass::http {
// The server's own Request and Response (message.h) share these names; this inline namespace
// gives the client's types their own linkage names, so that one binary can hold both (`onepass`
// serves and downloads from the Hub) without their inline members being merged by the linker.
inline namespace client {

using Headers = std::vector<std::pair<std::string, std::string>>;

// An endpoint's base URL: http[s]://host[:port][/prefix]. The prefix is prepended to every
// target, so a server mounted under a path (a proxy, a SageMaker-like gateway) works unchanged.
struct Url {
  std::string host;
  std::uint16_t port = 80;
  std::string prefix;  // without a trailing '/'; empty for the root
  bool tls = false;    // https://

  // Throws Error(kInvalidArgument) for anything but an http:// or https:// URL with a valid
  // port.
  static Url parse(std::string_view text);
  std::string to_string() const;
  // The Host header's value: the host, and the port unless it is the scheme's default (as
  // browsers and the AWS SDKs send it; a SigV4 signature covers this exact text).
  std::string authority() const;
};

struct Request {
  std::string method = "POST";
  std::string target = "/";  // path and query, appended to the Url prefix
  Headers headers;           // Host, Content-Length and Connection are added by the client
  std::string body;
  // When set, the response body is handed over piece by piece as it arrives (a download to a
  // file) instead of being collected in Response::body, and the connection's timeout bounds
  // each wait for more bytes rather than the whole exchange. A sink may throw to abort; the
  // connection is then closed.
  std::function<void(std::string_view)> body_sink = {};
};

struct Response {
  int status = 0;
  Headers headers;
  std::string body;
  // Case-insensitive lookup; empty when absent.
  std::string header(std::string_view name) const;
};

// Why a request got no HTTP answer. The bench reports these next to the HTTP status counts.
enum class TransportFailure { kConnect, kTimeout, kIo, kProtocol };
const char* transport_failure_name(TransportFailure failure);

class TransportError : public Error {
 public:
  TransportError(TransportFailure failure, const std::string& message)
      : Error(ErrorKind::kUnavailable, message), failure_(failure) {}
  TransportFailure failure() const { return failure_; }

 private:
  TransportFailure failure_;
};

class Connection {
 public:
  Connection(Url url, std::chrono::milliseconds timeout);
  ~Connection();
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  // Opens the TCP connection (and the TLS session for https) now, otherwise the first send()
  // does, so that a benchmark's first measured request does not pay for the handshake. Throws
  // TransportError; a certificate that does not verify is kConnect, its message naming
  // certificate verification and why.
  void connect();

  // Sends one request and reads the whole answer. The timeout bounds the whole exchange. A
  // keep-alive connection that the server closed while idle is reopened once, transparently.
  // Throws TransportError; any HTTP status (including 4xx/5xx) is a normal Response.
  Response send(const Request& request);

  const Url& url() const { return url_; }

  // How many times send() reopened the connection and sent a request again after the reused
  // one failed. A server that resets busy connections hides behind this retry, so load tests
  // report it: under a healthy server it stays 0 until an idle connection times out.
  std::size_t retries() const { return retries_; }

 private:
  Response exchange(const Request& request, std::chrono::steady_clock::time_point deadline);
  void close();
  void start_tls(std::chrono::steady_clock::time_point deadline);
  // Write all of `bytes` / read some bytes (0 at end of stream), through TLS when it is on,
  // waiting until `deadline`. Throw TransportError.
  void write_all(std::string_view bytes, std::chrono::steady_clock::time_point deadline);
  std::size_t read_some(char* into, std::size_t size,
                        std::chrono::steady_clock::time_point deadline);

  Url url_;
  std::chrono::milliseconds timeout_;
  int fd_ = -1;
  ssl_ctx_st* tls_context_ = nullptr;  // created on the first https connect
  ssl_st* tls_ = nullptr;              // the session on fd_
  std::size_t retries_ = 0;
  std::string buffer_;  // bytes read past the end of the previous response
};

}  // namespace client
}  // namespace onepass::http
