// One client's HTTP/2 connection to the gRPC port, on Asio: it reads into the connection's
// http2::Session, opens a StreamCall for each request stream through the CallRouter, and
// writes what the session and the calls produce, everything queued while a write is in flight
// going out in the next one. It runs on its own strand; the calls it serves run there too.
#pragma once

#include <array>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "api/grpc_server/stream_call.h"
#include "http2/session.h"

namespace onepass::api::grpc_server {

// What a connection needs of the server (server.cpp).
class CallRouter {
 public:
  // The call `headers` ask for on `stream`, started; nullptr when it was answered at once
  // (an HTTP error, not a gRPC call).
  virtual std::shared_ptr<StreamCall> open(const std::shared_ptr<Connection>& connection,
                                           std::uint32_t stream,
                                           std::vector<http2::Header> headers) = 0;

 protected:
  ~CallRouter() = default;
};

class Connection : public std::enable_shared_from_this<Connection>, private http2::StreamHandler {
 public:
  // `socket` was accepted on `strand`.
  Connection(Strand strand, boost::asio::ip::tcp::socket socket, CallRouter& router,
             http2::SessionLimits limits);

  // Sends the server's SETTINGS and starts reading. A client that has not sent its preface and
  // SETTINGS within `handshake_timeout` is dropped, so that idle sockets do not pile up.
  void start(std::chrono::milliseconds handshake_timeout);
  // From any thread: GOAWAY, then the connection closes once its calls are over.
  void go_away();
  // From any thread: closes the socket; the calls on it are reset.
  void close();

  // On the strand, for the calls.
  Strand strand() const { return strand_; }
  http2::Session& session() { return session_; }
  // Starts writing what the session holds, unless a write is in flight.
  void flush_output();
  // The call on `stream` is over.
  void forget(std::uint32_t stream);

 private:
  void on_headers(std::uint32_t stream, std::vector<http2::Header> headers,
                  bool end_stream) override;
  void on_data(std::uint32_t stream, std::string_view data, bool end_stream) override;
  void on_reset(std::uint32_t stream) override;

  void read();
  void close_now();
  // A drained or failed connection closes once nothing is left to write or answer.
  void close_when_done();

  Strand strand_;
  boost::asio::ip::tcp::socket socket_;
  boost::asio::steady_timer handshake_timer_;
  CallRouter& router_;
  http2::Session session_;
  std::array<char, 64 * 1024> read_buffer_;
  std::string writing_;
  bool write_in_flight_ = false;
  bool closing_ = false;       // draining or over: close once the calls are done
  bool session_over_ = false;  // a protocol error or the client's GOAWAY: nothing more is read
  bool closed_ = false;
  std::unordered_map<std::uint32_t, std::shared_ptr<StreamCall>> calls_;
};

}  // namespace onepass::api::grpc_server
