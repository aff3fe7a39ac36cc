// Beast/Asio implementation of http::Server. One Session per connection, running on a strand;
// the handler's Respond posts back to that strand, so a response may be produced on any thread.
#include "http/server.h"

#include <boost/asio/bind_executor.hpp>
#include <boost/asio/dispatch.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <csignal>
#include <cstdlib>
#include <optional>
#include <thread>
#include <vector>

#include "base/error.h"
#include "http/wire.h"

namespace onepass::http {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace bhttp = boost::beast::http;
using tcp = asio::ip::tcp;
using error_code = boost::system::error_code;

std::string_view Request::path() const {
  std::string_view t = target;
  const auto q = t.find('?');
  return q == std::string_view::npos ? t : t.substr(0, q);
}

const std::string* Request::header(std::string_view lower_name) const {
  for (const auto& h : headers)
    if (h.name == lower_name) return &h.value;
  return nullptr;
}

// Member order matters: the io_context is destroyed after the acceptor and timers that use it
// and before the counters that the sessions it destroys still touch.
struct Server::State {
  ServerOptions options;
  Handler handler;
  ErrorResponder errors;
  std::atomic<std::size_t> in_flight{0};
  std::atomic<std::size_t> connections{0};
  std::atomic<bool> draining{false};
  std::function<void()> on_drain;
  std::chrono::milliseconds drain_timeout{25000};
  std::chrono::steady_clock::time_point drain_deadline;
  int signals_seen = 0;
  asio::io_context ioc;
  // Every acceptor operation runs on this strand: the drain closes the listener from a timer
  // handler while an accept handler may be starting the next accept on another I/O thread.
  asio::strand<asio::io_context::executor_type> accept_strand{asio::make_strand(ioc)};
  tcp::acceptor acceptor{ioc};
  bool listener_closed = false;  // drain timer handlers only (one chain, never concurrent)
  tcp::endpoint bound;           // kept: the acceptor is closed at the end of a drain
  std::chrono::steady_clock::time_point close_grace_end;
  std::optional<asio::steady_timer> drain_timer;
  std::optional<asio::signal_set> signals;
  std::function<void(error_code, int)> on_signal;

  void do_accept();
  void close_listener();
  void start_drain();
  void poll_drain();
};

namespace {

class Session : public std::enable_shared_from_this<Session> {
 public:
  // `state` outlives every session (see Server::State).
  Session(tcp::socket&& socket, Server::State* state) : stream_(std::move(socket)), state_(state) {
    ++state_->connections;
    error_code ec;
    stream_.socket().set_option(tcp::no_delay(true), ec);
  }
  ~Session() { --state_->connections; }

  void start() {
    asio::dispatch(stream_.get_executor(), [self = shared_from_this()] { self->read_header(); });
  }

 private:
  const ServerOptions& options() const { return state_->options; }

  void read_header() {
    target_.clear();
    parser_.emplace();
    wire::limit_parser(*parser_, options());
    stream_.expires_after(options().header_timeout);
    bhttp::async_read_header(
        stream_, buffer_, *parser_,
        [self = shared_from_this()](error_code ec, std::size_t) { self->on_header(ec); });
  }

  void on_header(error_code ec) {
    if (ec) return fail_read(ec);
    target_ = wire::target_of(*parser_);
    received_ = std::chrono::steady_clock::now();
    if (auto refusal = wire::check_header(*parser_, options()))
      return send_error(refusal->status, std::move(refusal->message));
    if (wire::expects_continue(*parser_)) {
      continue_.emplace(bhttp::status::continue_, parser_->get().version());
      stream_.expires_after(options().write_timeout);
      bhttp::async_write(stream_, *continue_,
                         [self = shared_from_this()](error_code ec, std::size_t) {
                           if (ec) return self->close();
                           self->read_body();
                         });
      return;
    }
    read_body();
  }

  void read_body() {
    stream_.expires_after(options().body_timeout);
    bhttp::async_read(stream_, buffer_, *parser_,
                      [self = shared_from_this()](error_code ec, std::size_t) {
                        if (ec) return self->fail_read(ec);
                        self->dispatch_request();
                      });
  }

  void fail_read(error_code ec) {
    // The start line may be parsed even when the header as a whole failed (body_limit).
    if (target_.empty() && parser_) target_ = wire::target_of(*parser_);
    auto refusal = wire::classify_read_error(ec);
    if (refusal.status == 0) return close();
    send_error(refusal.status, std::move(refusal.message));
  }

  void dispatch_request() {
    keep_alive_ = parser_->get().keep_alive();
    Request request = wire::take_request(*parser_, received_);
    parser_.reset();
    target_.clear();
    stream_.expires_never();

    ++state_->in_flight;
    auto once = std::make_shared<std::atomic<bool>>(false);
    Respond respond = [self = shared_from_this(), once](Response response) {
      if (once->exchange(true)) return;
      asio::post(self->stream_.get_executor(), [self, response = std::move(response)]() mutable {
        self->write(std::move(response), true);
      });
    };
    const std::string target = request.target;
    try {
      state_->handler(std::move(request), respond);
    } catch (const std::exception& e) {
      respond(state_->errors(500, target, "internal error"));
    }
  }

  void send_error(int status, std::string message) {
    // The request is not (fully) read, so the connection cannot be reused.
    keep_alive_ = false;
    Response response = state_->errors(status, target_, message);
    response.close = true;
    write(std::move(response), false);
  }

  void write(Response response, bool counted) {
    close_after_ = response.close || !keep_alive_ || state_->draining.load();
    wire::fill_response(res_, std::move(response), !close_after_);
    stream_.expires_after(options().write_timeout);
    bhttp::async_write(stream_, res_,
                       [self = shared_from_this(), counted](error_code ec, std::size_t) {
                         if (counted) --self->state_->in_flight;
                         if (ec) return self->close();
                         if (self->close_after_) return self->linger_close();
                         self->read_header();
                       });
  }

  // Half-close, then swallow what the client still sends for a moment: closing with unread
  // bytes would reset the connection and could destroy the error response in flight.
  void linger_close() {
    error_code ec;
    stream_.socket().shutdown(tcp::socket::shutdown_send, ec);
    stream_.expires_after(std::chrono::seconds(1));
    buffer_.clear();
    stream_.async_read_some(buffer_.prepare(16 * 1024),
                            [self = shared_from_this()](error_code ec, std::size_t) {
                              if (ec) return self->close();
                              self->linger_close_more();
                            });
  }

  void linger_close_more() {
    buffer_.clear();
    stream_.async_read_some(buffer_.prepare(16 * 1024),
                            [self = shared_from_this()](error_code ec, std::size_t) {
                              if (ec) return self->close();
                              self->linger_close_more();
                            });
  }

  void close() {
    error_code ec;
    stream_.socket().shutdown(tcp::socket::shutdown_both, ec);
    stream_.close();
  }

  beast::tcp_stream stream_;
  Server::State* state_;
  beast::flat_buffer buffer_;
  std::optional<bhttp::request_parser<bhttp::string_body>> parser_;
  std::optional<bhttp::response<bhttp::empty_body>> continue_;
  bhttp::response<bhttp::string_body> res_;
  std::string target_;
  std::chrono::steady_clock::time_point received_{};
  bool keep_alive_ = true;
  bool close_after_ = false;
};

}  // namespace

void Server::State::do_accept() {
  if (!acceptor.is_open()) return;
  acceptor.async_accept(
      asio::make_strand(ioc),
      asio::bind_executor(accept_strand, [this](error_code ec, tcp::socket socket) {
        // A connection accepted just before the drain closed the listener is still answered
        // (503 while draining): dropping it would look to the client like a lost request.
        if (!ec) std::make_shared<Session>(std::move(socket), this)->start();
        if (!acceptor.is_open()) return;
        if (!ec) return do_accept();
        // Out of descriptors and the like: back off instead of spinning.
        auto timer = std::make_shared<asio::steady_timer>(ioc, std::chrono::milliseconds(50));
        timer->async_wait(
            asio::bind_executor(accept_strand, [this, timer](error_code) { do_accept(); }));
      }));
}

void Server::State::close_listener() {
  // Connections whose handshake the kernel already completed wait in the listen backlog;
  // closing the listener would reset them unanswered. Take them first, so they get their 503;
  // only a handshake completing in the instant between the last accept and the close is reset.
  error_code ec;
  acceptor.non_blocking(true, ec);
  while (!ec) {
    tcp::socket socket = acceptor.accept(asio::make_strand(ioc), ec);
    if (!ec) std::make_shared<Session>(std::move(socket), this)->start();
  }
  acceptor.close(ec);
}

void Server::State::start_drain() {
  if (draining.exchange(true)) return;
  if (on_drain) on_drain();
  drain_deadline = std::chrono::steady_clock::now() + drain_timeout;
  drain_timer.emplace(ioc);
  poll_drain();
}

void Server::State::poll_drain() {
  const auto now = std::chrono::steady_clock::now();
  if (now >= drain_deadline) {
    ioc.stop();
    return;
  }
  if (in_flight.load() == 0) {
    if (!listener_closed) {
      // Nothing left in flight: refuse new connections from now on (a refused connect is
      // unambiguous to a client; a connection accepted and then dropped at exit is not), and
      // give the ones already accepted a moment to send their request and get their 503.
      listener_closed = true;
      close_grace_end = now + std::chrono::milliseconds(100);
      asio::post(accept_strand, [this] { close_listener(); });
    } else if (now >= close_grace_end) {
      ioc.stop();
      return;
    }
  }
  drain_timer->expires_after(std::chrono::milliseconds(10));
  drain_timer->async_wait([this](error_code ec) {
    if (!ec) poll_drain();
  });
}

Server::Server(ServerOptions options, Handler handler, ErrorResponder errors)
    : state_(std::make_shared<State>()) {
  state_->options = std::move(options);
  state_->handler = std::move(handler);
  state_->errors = std::move(errors);
}

Server::~Server() { stop(); }

void Server::listen() {
  auto& st = *state_;
  error_code ec;
  auto address = asio::ip::make_address(st.options.host, ec);
  if (ec) {
    tcp::resolver resolver(st.ioc);
    auto results = resolver.resolve(st.options.host, "", ec);
    if (ec || results.empty())
      throw Error(ErrorKind::kInvalidArgument, "cannot resolve host '" + st.options.host + "'");
    address = results.begin()->endpoint().address();
  }
  const tcp::endpoint endpoint(address, st.options.port);
  st.acceptor.open(endpoint.protocol(), ec);
  if (!ec) st.acceptor.set_option(asio::socket_base::reuse_address(true), ec);
  if (!ec) st.acceptor.bind(endpoint, ec);
  if (!ec) st.acceptor.listen(asio::socket_base::max_listen_connections, ec);
  if (!ec) st.bound = st.acceptor.local_endpoint(ec);
  if (ec)
    throw Error(ErrorKind::kUnavailable, "cannot listen on " + st.options.host + ":" +
                                             std::to_string(st.options.port) + ": " + ec.message());
}

std::uint16_t Server::port() const { return state_->bound.port(); }

std::string Server::address() const {
  const auto& endpoint = state_->bound;
  const auto host = endpoint.address().to_string();
  const bool v6 = endpoint.address().is_v6();
  return (v6 ? "[" + host + "]" : host) + ":" + std::to_string(endpoint.port());
}

void Server::run(bool handle_signals, std::function<void()> on_drain,
                 std::chrono::milliseconds drain_timeout) {
  auto& st = *state_;
  st.on_drain = std::move(on_drain);
  st.drain_timeout = drain_timeout;
  if (handle_signals) {
    st.signals.emplace(st.ioc, SIGINT, SIGTERM);
    st.on_signal = [&st](error_code ec, int) {
      if (ec) return;
      if (++st.signals_seen > 1) std::_Exit(1);  // second signal: exit at once
      st.start_drain();
      st.signals->async_wait(st.on_signal);
    };
    st.signals->async_wait(st.on_signal);
  }
  st.do_accept();
  std::vector<std::thread> threads;
  for (int i = 1; i < st.options.io_threads; ++i) threads.emplace_back([&st] { st.ioc.run(); });
  st.ioc.run();
  for (auto& t : threads) t.join();
}

void Server::begin_drain() {
  asio::post(state_->ioc, [st = state_.get()] { st->start_drain(); });
}

bool Server::draining() const { return state_->draining.load(); }

void Server::stop() { state_->ioc.stop(); }

std::size_t Server::in_flight() const { return state_->in_flight.load(); }
std::size_t Server::open_connections() const { return state_->connections.load(); }

}  // namespace onepass::http
