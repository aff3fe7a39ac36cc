// Event-driven HTTP/1.1 server (Boost.Beast on Asio): a fixed number of I/O threads serve any
// number of keep-alive connections; each connection runs on its own strand. The server knows
// nothing about routes or JSON: it reads a request, hands it to the Handler, and writes whatever
// the handler answers, whenever it answers (no I/O thread waits for it).
//
// Limits enforced here, before the handler sees anything: header bytes and count (431), body
// size from Content-Length before reading it, or while reading a chunked body (413), framing
// errors such as conflicting Content-Length and Transfer-Encoding (400, connection closed), and
// read/write timeouts so a slow client never pins a thread.
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "http/message.h"

namespace onepass::http {

// Defaults `onepass serve` starts from too (apps/onepass/serve_settings.cpp).
inline constexpr const char* kDefaultHost = "127.0.0.1";
inline constexpr std::uint16_t kDefaultPort = 8080;
inline constexpr std::size_t kDefaultPayloadLimitBytes = 6 * 1024 * 1024;
inline constexpr std::chrono::milliseconds kDefaultTimeout{30000};

struct ServerOptions {
  std::string host = kDefaultHost;
  std::uint16_t port = kDefaultPort;  // 0 binds an ephemeral port; see Server::port()
  int io_threads = 2;
  std::size_t payload_limit_bytes = kDefaultPayloadLimitBytes;
  std::size_t header_limit_bytes = 16 * 1024;
  std::size_t max_header_count = 100;
  // Time allowed for a whole request header (also the keep-alive idle time), for the body, and
  // for writing a response.
  std::chrono::milliseconds header_timeout = kDefaultTimeout;
  std::chrono::milliseconds body_timeout = kDefaultTimeout;
  std::chrono::milliseconds write_timeout = kDefaultTimeout;
};

class Server {
 public:
  Server(ServerOptions options, Handler handler, ErrorResponder errors);
  ~Server();
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  // Binds and listens; throws onepass::Error(kUnavailable) naming the address when it cannot.
  void listen();
  std::uint16_t port() const;
  std::string address() const;  // "host:port" as bound

  // Runs the I/O threads until stop() or a drained shutdown. With `handle_signals`, the first
  // SIGTERM/SIGINT calls `on_drain`, turns every later response into Connection: close, waits
  // for the requests in flight (at most `drain_timeout`) and returns; a second signal exits the
  // process at once.
  void run(bool handle_signals, std::function<void()> on_drain = {},
           std::chrono::milliseconds drain_timeout = std::chrono::seconds(25));

  // Starts the same drain as a signal would (for tests and embedding).
  void begin_drain();
  bool draining() const;
  void stop();

  // Requests handed to the handler whose response is not written yet.
  std::size_t in_flight() const;
  std::size_t open_connections() const;

  struct State;

 private:
  std::shared_ptr<State> state_;
};

}  // namespace onepass::http
