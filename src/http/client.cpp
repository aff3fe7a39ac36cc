#include "http/client.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace onepass::http {
inline namespace client {
namespace {

using Clock = std::chrono::steady_clock;

bool iequals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(a[i])) !=
        std::tolower(static_cast<unsigned char>(b[i])))
      return false;
  }
  return true;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r'))
    s.remove_suffix(1);
  return s;
}

int remaining_ms(Clock::time_point deadline) {
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
  return static_cast<int>(std::max<std::int64_t>(0, left.count()));
}

// Waits until fd is ready for `events`; throws a timeout when the deadline passes first.
void wait_for(int fd, short events, Clock::time_point deadline) {
  for (;;) {
    pollfd p{fd, events, 0};
    const int ms = remaining_ms(deadline);
    if (ms == 0) throw TransportError(TransportFailure::kTimeout, "request timed out");
    const int rc = ::poll(&p, 1, ms);
    if (rc > 0) return;
    if (rc == 0) throw TransportError(TransportFailure::kTimeout, "request timed out");
    if (errno != EINTR) throw TransportError(TransportFailure::kIo, "poll failed");
  }
}

// The newest OpenSSL error on this thread's queue, as text (empty when none).
std::string openssl_error() {
  const unsigned long code = ERR_get_error();
  ERR_clear_error();
  if (code == 0) return {};
  char text[256];
  ERR_error_string_n(code, text, sizeof text);
  return text;
}

// A client context that verifies the server: the system store (OpenSSL's default paths, which
// SSL_CERT_FILE and SSL_CERT_DIR override), TLS 1.2 at least. Made per connection so that the
// environment of the moment is honoured; it costs one read of the CA bundle per connection.
ssl_ctx_st* make_tls_context() {
  SSL_CTX* context = SSL_CTX_new(TLS_client_method());
  if (context == nullptr)
    throw TransportError(TransportFailure::kConnect,
                         "cannot create a TLS context: " + openssl_error());
  SSL_CTX_set_min_proto_version(context, TLS1_2_VERSION);
  SSL_CTX_set_verify(context, SSL_VERIFY_PEER, nullptr);
  const char* bundle = std::getenv("SSL_CERT_FILE");
  const bool loaded = bundle != nullptr && *bundle != '\0'
                          ? SSL_CTX_load_verify_locations(context, bundle, nullptr) == 1
                          : SSL_CTX_set_default_verify_paths(context) == 1;
  if (!loaded) {
    const std::string why = openssl_error();
    SSL_CTX_free(context);
    throw TransportError(
        TransportFailure::kConnect,
        bundle != nullptr && *bundle != '\0'
            ? "cannot read the CA certificates in SSL_CERT_FILE=" + std::string(bundle) + ": " + why
            : "cannot read the system CA certificates: " + why);
  }
  return context;
}

}  // namespace

const char* transport_failure_name(TransportFailure failure) {
  switch (failure) {
    case TransportFailure::kConnect:
      return "connect";
    case TransportFailure::kTimeout:
      return "timeout";
    case TransportFailure::kIo:
      return "io";
    case TransportFailure::kProtocol:
      return "protocol";
  }
  return "unknown";
}

Url Url::parse(std::string_view text) {
  constexpr std::string_view kHttp = "http://";
  constexpr std::string_view kHttps = "https://";
  Url url;
  if (text.substr(0, kHttps.size()) == kHttps) {
    url.tls = true;
    url.port = 443;
    text.remove_prefix(kHttps.size());
  } else if (text.substr(0, kHttp.size()) == kHttp) {
    text.remove_prefix(kHttp.size());
  } else {
    throw Error(ErrorKind::kInvalidArgument,
                "endpoint '" + std::string(text) + "' must start with http:// or https://");
  }
  const std::size_t slash = text.find('/');
  std::string_view authority = text.substr(0, slash);
  if (slash != std::string_view::npos) url.prefix = std::string(text.substr(slash));
  while (!url.prefix.empty() && url.prefix.back() == '/') url.prefix.pop_back();
  const std::size_t colon = authority.rfind(':');
  if (colon != std::string_view::npos && authority.find(']') == std::string_view::npos) {
    const std::string port(authority.substr(colon + 1));
    authority = authority.substr(0, colon);
    char* end = nullptr;
    const long value = std::strtol(port.c_str(), &end, 10);
    if (port.empty() || *end != '\0' || value <= 0 || value > 65535) {
      throw Error(ErrorKind::kInvalidArgument, "endpoint port '" + port + "' is not a valid port");
    }
    url.port = static_cast<std::uint16_t>(value);
  }
  if (authority.empty()) throw Error(ErrorKind::kInvalidArgument, "endpoint has no host");
  url.host = std::string(authority);
  return url;
}

std::string Url::to_string() const {
  return (tls ? "https://" : "http://") + host + ":" + std::to_string(port) + prefix;
}

std::string Url::authority() const {
  const bool default_port = port == (tls ? 443 : 80);
  return default_port ? host : host + ":" + std::to_string(port);
}

std::string Response::header(std::string_view name) const {
  for (const auto& [key, value] : headers) {
    if (iequals(key, name)) return value;
  }
  return {};
}

Connection::Connection(Url url, std::chrono::milliseconds timeout)
    : url_(std::move(url)), timeout_(timeout) {}

Connection::~Connection() { close(); }

void Connection::close() {
  if (tls_ != nullptr) SSL_free(tls_);  // no close_notify: the peer sees the TCP close
  tls_ = nullptr;
  if (tls_context_ != nullptr) SSL_CTX_free(tls_context_);
  tls_context_ = nullptr;
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  buffer_.clear();
}

void Connection::start_tls(Clock::time_point deadline) {
  tls_context_ = make_tls_context();
  tls_ = SSL_new(tls_context_);
  if (tls_ == nullptr || SSL_set_fd(tls_, fd_) != 1)
    throw TransportError(TransportFailure::kConnect, "cannot start TLS: " + openssl_error());
  // SNI, and the name (or address) the certificate must be issued for.
  in6_addr address;
  const bool is_ip = ::inet_pton(AF_INET, url_.host.c_str(), &address) == 1 ||
                     ::inet_pton(AF_INET6, url_.host.c_str(), &address) == 1;
  if (is_ip) {
    X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(tls_), url_.host.c_str());
  } else {
    SSL_set_tlsext_host_name(tls_, url_.host.c_str());
    SSL_set1_host(tls_, url_.host.c_str());
  }
  for (;;) {
    const int rc = SSL_connect(tls_);
    if (rc == 1) return;
    const int error = SSL_get_error(tls_, rc);
    if (error == SSL_ERROR_WANT_READ) {
      wait_for(fd_, POLLIN, deadline);
    } else if (error == SSL_ERROR_WANT_WRITE) {
      wait_for(fd_, POLLOUT, deadline);
    } else {
      const long verify = SSL_get_verify_result(tls_);
      const std::string where = url_.host + ":" + std::to_string(url_.port);
      if (verify != X509_V_OK) {
        throw TransportError(TransportFailure::kConnect,
                             "TLS certificate verification failed for " + where + ": " +
                                 X509_verify_cert_error_string(verify) +
                                 " (the CA certificates come from the system store, or from "
                                 "SSL_CERT_FILE when it is set)");
      }
      throw TransportError(TransportFailure::kConnect,
                           "TLS handshake with " + where + " failed: " + openssl_error());
    }
  }
}

void Connection::write_all(std::string_view bytes, Clock::time_point deadline) {
  std::size_t sent = 0;
  while (sent < bytes.size()) {
    if (tls_ != nullptr) {
      std::size_t n = 0;
      const int rc = SSL_write_ex(tls_, bytes.data() + sent, bytes.size() - sent, &n);
      if (rc == 1) {
        sent += n;
        continue;
      }
      const int error = SSL_get_error(tls_, rc);
      if (error == SSL_ERROR_WANT_WRITE) {
        wait_for(fd_, POLLOUT, deadline);
      } else if (error == SSL_ERROR_WANT_READ) {
        wait_for(fd_, POLLIN, deadline);
      } else {
        ERR_clear_error();
        throw TransportError(TransportFailure::kIo, "send failed");
      }
      continue;
    }
    const ssize_t n = ::send(fd_, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL);
    if (n > 0) {
      sent += static_cast<std::size_t>(n);
    } else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      wait_for(fd_, POLLOUT, deadline);
    } else if (n < 0 && errno == EINTR) {
      continue;
    } else {
      throw TransportError(TransportFailure::kIo, "send failed");
    }
  }
}

std::size_t Connection::read_some(char* into, std::size_t size, Clock::time_point deadline) {
  for (;;) {
    if (tls_ != nullptr) {
      std::size_t n = 0;
      const int rc = SSL_read_ex(tls_, into, size, &n);
      if (rc == 1) return n;
      const int error = SSL_get_error(tls_, rc);
      if (error == SSL_ERROR_ZERO_RETURN) return 0;
      if (error == SSL_ERROR_WANT_READ) {
        wait_for(fd_, POLLIN, deadline);
      } else if (error == SSL_ERROR_WANT_WRITE) {
        wait_for(fd_, POLLOUT, deadline);
      } else if (error == SSL_ERROR_SYSCALL && ERR_peek_error() == 0) {
        return 0;  // the peer closed the TCP connection without close_notify
      } else {
        ERR_clear_error();
        throw TransportError(TransportFailure::kIo, "receive failed");
      }
      continue;
    }
    const ssize_t n = ::recv(fd_, into, size, 0);
    if (n >= 0) return static_cast<std::size_t>(n);
    if (errno == EAGAIN || errno == EWOULDBLOCK) {
      wait_for(fd_, POLLIN, deadline);
    } else if (errno != EINTR) {
      throw TransportError(TransportFailure::kIo, "receive failed");
    }
  }
}

void Connection::connect() {
  if (fd_ >= 0) return;
  const auto deadline = Clock::now() + timeout_;
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  const std::string port = std::to_string(url_.port);
  if (::getaddrinfo(url_.host.c_str(), port.c_str(), &hints, &found) != 0 || found == nullptr) {
    throw TransportError(TransportFailure::kConnect, "cannot resolve host '" + url_.host + "'");
  }
  std::string why = "connection refused";
  for (addrinfo* ai = found; ai != nullptr && fd_ < 0; ai = ai->ai_next) {
    const int fd =
        ::socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, ai->ai_protocol);
    if (fd < 0) continue;
    int rc = ::connect(fd, ai->ai_addr, ai->ai_addrlen);
    if (rc != 0 && errno == EINPROGRESS) {
      try {
        wait_for(fd, POLLOUT, deadline);
      } catch (const TransportError&) {
        ::close(fd);
        why = "connect timed out";
        continue;
      }
      int err = 0;
      socklen_t len = sizeof(err);
      ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len);
      rc = err == 0 ? 0 : -1;
      if (err != 0) why = std::strerror(err);
    }
    if (rc != 0) {
      ::close(fd);
      continue;
    }
    // Small request/response exchanges: Nagle's delay would dominate the latency we measure.
    int one = 1;
    ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    fd_ = fd;
  }
  ::freeaddrinfo(found);
  if (fd_ < 0) {
    throw TransportError(TransportFailure::kConnect,
                         "cannot connect to " + url_.host + ":" + port + ": " + why);
  }
  if (url_.tls) {
    try {
      start_tls(deadline);
    } catch (const TransportError&) {
      close();
      throw;
    }
  }
}

Response Connection::send(const Request& request) {
  const auto deadline = Clock::now() + timeout_;
  const bool reused = fd_ >= 0;
  connect();
  try {
    return exchange(request, deadline);
  } catch (const TransportError& e) {
    close();
    // An idle keep-alive connection may have been closed by the server just before we wrote;
    // that is not the server failing this request, so retry once on a fresh connection.
    if (!reused || e.failure() != TransportFailure::kIo) throw;
  }
  ++retries_;
  connect();
  try {
    return exchange(request, deadline);
  } catch (const TransportError&) {
    close();
    throw;
  }
}

Response Connection::exchange(const Request& request, Clock::time_point deadline) {
  const bool streaming = static_cast<bool>(request.body_sink);
  std::string out;
  out.reserve(request.body.size() + 256);
  out += request.method + " " + url_.prefix + request.target + " HTTP/1.1\r\n";
  out += "Host: " + url_.authority() + "\r\n";
  for (const auto& [key, value] : request.headers) out += key + ": " + value + "\r\n";
  if (!request.body.empty() || request.method == "POST" || request.method == "PUT") {
    out += "Content-Length: " + std::to_string(request.body.size()) + "\r\n";
  }
  out += "Connection: keep-alive\r\n\r\n";
  out += request.body;

  write_all(out, deadline);

  // Reads more bytes into buffer_; false at end of stream.
  bool got_any = !buffer_.empty();
  auto fill = [&]() -> bool {
    char chunk[16384];
    std::size_t n = 0;
    try {
      n = read_some(chunk, sizeof(chunk), deadline);
    } catch (const TransportError& e) {
      if (e.failure() != TransportFailure::kIo || !got_any) throw;
      throw TransportError(TransportFailure::kProtocol, "receive failed");
    }
    if (n == 0) return false;
    buffer_.append(chunk, n);
    got_any = true;
    if (streaming) deadline = Clock::now() + timeout_;  // an inactivity timeout
    return true;
  };
  auto eof_error = [&] {
    // A close before any byte of the answer is an I/O failure (retryable on a reused
    // connection); a close in the middle of an answer is a broken response.
    return TransportError(got_any ? TransportFailure::kProtocol : TransportFailure::kIo,
                          "server closed the connection before the response ended");
  };

  Response response;
  // Only a 2xx body goes to the sink: an error page or a redirect's body is kept in the answer.
  auto deliver = [&](std::string_view bytes) {
    if (bytes.empty()) return;
    if (streaming && response.status / 100 == 2) {
      request.body_sink(bytes);
    } else {
      response.body.append(bytes);
    }
  };

  std::size_t header_end;
  while ((header_end = buffer_.find("\r\n\r\n")) == std::string::npos) {
    if (buffer_.size() > (1u << 20)) {
      throw TransportError(TransportFailure::kProtocol, "response headers too large");
    }
    if (!fill()) throw eof_error();
  }

  std::string_view head(buffer_.data(), header_end);
  const std::size_t line_end = head.find("\r\n");
  const std::string_view status_line = head.substr(0, line_end);
  if (status_line.substr(0, 5) != "HTTP/" || status_line.size() < 12) {
    throw TransportError(TransportFailure::kProtocol, "malformed status line");
  }
  response.status = std::atoi(std::string(status_line.substr(9, 3)).c_str());
  if (response.status < 100 || response.status > 599) {
    throw TransportError(TransportFailure::kProtocol, "malformed status code");
  }
  std::size_t pos = line_end == std::string_view::npos ? head.size() : line_end + 2;
  while (pos < head.size()) {
    std::size_t eol = head.find("\r\n", pos);
    if (eol == std::string_view::npos) eol = head.size();
    const std::string_view line = head.substr(pos, eol - pos);
    const std::size_t colon = line.find(':');
    if (colon != std::string_view::npos) {
      response.headers.emplace_back(std::string(trim(line.substr(0, colon))),
                                    std::string(trim(line.substr(colon + 1))));
    }
    pos = eol + 2;
  }
  buffer_.erase(0, header_end + 4);

  const bool keep_alive = !iequals(response.header("Connection"), "close");
  const std::string length = response.header("Content-Length");
  const bool no_body = response.status == 204 || response.status == 304 ||
                       response.status / 100 == 1 || request.method == "HEAD";
  if (no_body) {
    // nothing to read
  } else if (iequals(response.header("Transfer-Encoding"), "chunked")) {
    for (;;) {
      std::size_t eol;
      while ((eol = buffer_.find("\r\n")) == std::string::npos) {
        if (!fill()) throw eof_error();
      }
      const std::size_t size = std::strtoul(buffer_.substr(0, eol).c_str(), nullptr, 16);
      buffer_.erase(0, eol + 2);
      while (buffer_.size() < size + 2) {
        if (!fill()) throw eof_error();
      }
      deliver(std::string_view(buffer_).substr(0, size));
      buffer_.erase(0, size + 2);
      if (size == 0) break;  // trailers are not used by any server we talk to
    }
  } else if (!length.empty()) {
    std::size_t left = std::strtoul(length.c_str(), nullptr, 10);
    while (left > 0) {
      if (buffer_.empty() && !fill()) throw eof_error();
      const std::size_t take = std::min(left, buffer_.size());
      deliver(std::string_view(buffer_).substr(0, take));
      buffer_.erase(0, take);
      left -= take;
    }
  } else {
    do {
      deliver(buffer_);
      buffer_.clear();
    } while (fill());
    close();
    return response;
  }
  if (!keep_alive) close();
  return response;
}

}  // namespace client
}  // namespace onepass::http
