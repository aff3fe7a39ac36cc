#include "http/client.h"

#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>

namespace onepass::http {
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
  constexpr std::string_view kScheme = "http://";
  if (text.substr(0, kScheme.size()) != kScheme) {
    throw Error(
        ErrorKind::kInvalidArgument,
        "endpoint '" + std::string(text) + "' must start with http:// (TLS is not supported)");
  }
  text.remove_prefix(kScheme.size());
  const std::size_t slash = text.find('/');
  std::string_view authority = text.substr(0, slash);
  Url url;
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
  return "http://" + host + ":" + std::to_string(port) + prefix;
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
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  buffer_.clear();
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
  out += "Host: " + url_.host + ":" + std::to_string(url_.port) + "\r\n";
  for (const auto& [key, value] : request.headers) out += key + ": " + value + "\r\n";
  if (!request.body.empty() || request.method == "POST" || request.method == "PUT") {
    out += "Content-Length: " + std::to_string(request.body.size()) + "\r\n";
  }
  out += "Connection: keep-alive\r\n\r\n";
  out += request.body;

  std::size_t sent = 0;
  while (sent < out.size()) {
    const ssize_t n = ::send(fd_, out.data() + sent, out.size() - sent, MSG_NOSIGNAL);
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

  // Reads more bytes into buffer_; false at end of stream.
  bool got_any = !buffer_.empty();
  auto fill = [&]() -> bool {
    char chunk[16384];
    for (;;) {
      const ssize_t n = ::recv(fd_, chunk, sizeof(chunk), 0);
      if (n > 0) {
        buffer_.append(chunk, static_cast<std::size_t>(n));
        got_any = true;
        if (streaming) deadline = Clock::now() + timeout_;  // an inactivity timeout
        return true;
      }
      if (n == 0) return false;
      if (errno == EAGAIN || errno == EWOULDBLOCK) {
        wait_for(fd_, POLLIN, deadline);
      } else if (errno != EINTR) {
        throw TransportError(got_any ? TransportFailure::kProtocol : TransportFailure::kIo,
                             "receive failed");
      }
    }
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

}  // namespace onepass::http
