#include "api/grpc_server/connection.h"

#include <boost/asio/buffer.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/write.hpp>

#include "base/log.h"

namespace onepass::api::grpc_server {

namespace asio = boost::asio;
using error_code = boost::system::error_code;

Connection::Connection(Strand strand, asio::ip::tcp::socket socket, CallRouter& router,
                       http2::SessionLimits limits)
    : strand_(std::move(strand)),
      socket_(std::move(socket)),
      handshake_timer_(strand_),
      router_(router),
      session_(http2::Role::kServer, *this, limits) {
  error_code ec;
  socket_.set_option(asio::ip::tcp::no_delay(true), ec);
}

void Connection::start(std::chrono::milliseconds handshake_timeout) {
  asio::post(strand_, [self = shared_from_this(), handshake_timeout] {
    self->flush_output();
    self->read();
    self->handshake_timer_.expires_after(handshake_timeout);
    self->handshake_timer_.async_wait([self](error_code ec) {
      if (!ec && !self->session_.established()) self->close_now();
    });
  });
}

void Connection::go_away() {
  asio::post(strand_, [self = shared_from_this()] {
    self->session_.go_away();
    self->closing_ = true;
    self->flush_output();
    self->close_when_done();
  });
}

void Connection::close() {
  asio::post(strand_, [self = shared_from_this()] { self->close_now(); });
}

void Connection::read() {
  if (closed_) return;
  socket_.async_read_some(
      asio::buffer(read_buffer_), [self = shared_from_this()](error_code ec, std::size_t n) {
        if (ec) return self->close_now();
        bool over = false;
        try {
          over = !self->session_.receive(std::string_view(self->read_buffer_.data(), n));
        } catch (const std::exception& e) {
          // Out of memory in a handler, say: the session may be half-way through a frame, so
          // the connection goes, and the I/O thread and the other connections stay.
          log::error("grpc", log::Fields().add("error", e.what()));
          return self->close_now();
        }
        if (over) {
          self->session_over_ = self->closing_ = true;
          if (!self->session_.failure().empty())
            log::warn("grpc", log::Fields().add(
                                  "error", "HTTP/2 connection error: " + self->session_.failure()));
        }
        self->flush_output();
        if (self->closing_) self->close_when_done();
        // A draining connection still reads: its calls' data and the client's window updates.
        if (!self->session_over_) self->read();
      });
}

void Connection::flush_output() {
  if (write_in_flight_ || closed_ || session_.output().empty()) return;
  writing_.clear();
  writing_.swap(session_.output());
  write_in_flight_ = true;
  asio::async_write(socket_, asio::buffer(writing_),
                    [self = shared_from_this()](error_code ec, std::size_t) {
                      self->write_in_flight_ = false;
                      if (ec) return self->close_now();
                      self->flush_output();
                      if (self->closing_) self->close_when_done();
                    });
}

void Connection::close_when_done() {
  if (closed_ || write_in_flight_ || !session_.output().empty()) return;
  if (!session_over_ && (!calls_.empty() || session_.open_streams() > 0)) return;
  close_now();
}

void Connection::close_now() {
  if (closed_) return;
  closed_ = true;
  handshake_timer_.cancel();
  error_code ec;
  socket_.shutdown(asio::ip::tcp::socket::shutdown_both, ec);
  socket_.close(ec);
  auto calls = std::move(calls_);
  calls_.clear();
  for (auto& [stream, call] : calls) call->on_reset();
}

void Connection::forget(std::uint32_t stream) {
  calls_.erase(stream);
  if (closing_) close_when_done();
}

void Connection::on_headers(std::uint32_t stream, std::vector<http2::Header> headers,
                            bool end_stream) {
  auto call = router_.open(shared_from_this(), stream, std::move(headers));
  if (!call || call->finished()) return;  // answered at once
  calls_.emplace(stream, call);
  if (end_stream) call->on_data(std::string_view(), true);
}

void Connection::on_data(std::uint32_t stream, std::string_view data, bool end_stream) {
  const auto it = calls_.find(stream);
  if (it == calls_.end()) return;
  const std::shared_ptr<StreamCall> call = it->second;  // it may forget itself meanwhile
  call->on_data(data, end_stream);
}

void Connection::on_reset(std::uint32_t stream) {
  const auto it = calls_.find(stream);
  if (it == calls_.end()) return;
  const std::shared_ptr<StreamCall> call = std::move(it->second);
  calls_.erase(it);
  call->on_reset();
}

}  // namespace onepass::api::grpc_server
