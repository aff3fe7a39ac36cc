// The gRPC transport (transport.h) on onepass's own HTTP/2 (src/http2), as the HTTP transport is
// on its own HTTP/1.1 client: the bench needs no gRPC library and no generated code (the
// dialects write and read the messages with protowire). The workers of a run share one
// connection to the target, so their calls in flight are multiplexed over one HTTP/2
// connection, as a gRPC client's calls are (tritonclient's cached channels, one grpc-js client),
// where HTTP/1.1 needs a connection per request in flight.
//
// A worker writes its call's frames itself, under the connection's lock, and waits for its
// answer on a condition of its own; one reader thread per connection takes in what the server
// sends and completes the calls. A connection that fails fails its calls in flight ("io") and
// is opened again by the next call.
#include <algorithm>
#include <array>
#include <atomic>
#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/write.hpp>
#include <cctype>
#include <condition_variable>
#include <map>
#include <mutex>
#include <thread>

#include "base/error.h"
#include "bench/transport.h"
#include "http2/session.h"
#include "protowire/grpc_frame.h"

namespace onepass::bench {
namespace {

namespace asio = boost::asio;
using tcp = asio::ip::tcp;
using Clock = std::chrono::steady_clock;

std::atomic<std::uint64_t> request_ids{0};  // x-request-id: unique over the process

// gRPC's status codes by number (doc/statuscodes.md in the gRPC repository).
constexpr std::array<const char*, 17> kStatusNames = {
    "OK",        "CANCELLED",      "UNKNOWN",           "INVALID_ARGUMENT",   "DEADLINE_EXCEEDED",
    "NOT_FOUND", "ALREADY_EXISTS", "PERMISSION_DENIED", "RESOURCE_EXHAUSTED", "FAILED_PRECONDITION",
    "ABORTED",   "OUT_OF_RANGE",   "UNIMPLEMENTED",     "INTERNAL",           "UNAVAILABLE",
    "DATA_LOSS", "UNAUTHENTICATED"};
constexpr int kDeadlineExceeded = 4;

std::string lower(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return text;
}

// grpc-message is percent-encoded.
std::string percent_decoded(std::string_view text) {
  std::string out;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '%' && i + 2 < text.size() &&
        std::isxdigit(static_cast<unsigned char>(text[i + 1])) &&
        std::isxdigit(static_cast<unsigned char>(text[i + 2]))) {
      out.push_back(static_cast<char>(std::stoi(std::string(text.substr(i + 1, 2)), nullptr, 16)));
      i += 2;
    } else {
      out.push_back(text[i]);
    }
  }
  return out;
}

// One call in flight: what the reader thread has gathered of its answer.
struct PendingCall {
  std::condition_variable answered;
  bool done = false;
  std::string failure;  // a transport failure: "io", "protocol"
  std::string http_status;
  int grpc_status = -1;  // -1: no grpc-status came
  std::string grpc_message;
  std::string inbound;  // data not yet a whole message
  std::vector<std::string> messages;
};

// The connection to one target that a run's transports share.
class Connection final : private http2::StreamHandler {
 public:
  explicit Connection(std::string target) : target_(std::move(target)) {}

  ~Connection() {
    std::unique_lock lock(mutex_);
    close_locked();
    lock.unlock();
    if (reader_.joinable()) reader_.join();  // the shut socket ends its read
  }

  // Opens the connection unless it is open; false when it cannot by `deadline`.
  bool connect(Clock::time_point deadline) {
    std::unique_lock lock(mutex_);
    return open_locked(lock, deadline);
  }

  // Sends `messages` on a new stream of `method` and waits for the answer until `deadline`;
  // the answer's messages go to `answers`.
  Outcome call(const std::string& method, const std::vector<std::string>& messages,
               const std::vector<http2::Header>& metadata, Clock::time_point deadline,
               std::vector<std::string>& answers) {
    Outcome outcome;
    PendingCall call;
    std::unique_lock lock(mutex_);
    if (!open_locked(lock, deadline)) {
      outcome.error = "connect";
      return outcome;
    }
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    std::vector<http2::Header> headers = {
        {":method", "POST"},
        {":scheme", "http"},
        {":path", method},
        {":authority", target_},
        {"content-type", "application/grpc"},
        {"te", "trailers"},
        {"grpc-timeout", std::to_string(std::clamp<std::int64_t>(left.count(), 1, 99999999)) + "m"},
        {"user-agent", "onepass-bench"}};
    headers.insert(headers.end(), metadata.begin(), metadata.end());
    const std::uint32_t stream = session_->open(headers);
    if (stream == 0) {  // the server is going away: the next call opens a new connection
      close_locked();
      outcome.error = "UNAVAILABLE";
      outcome.error_message = "the server closed the connection to new calls";
      return outcome;
    }
    calls_[stream] = &call;
    for (const auto& message : messages)
      session_->send_data(stream, protowire::grpc_framed(message));
    session_->end_request(stream);
    write_locked();
    if (!call.answered.wait_until(lock, deadline, [&] { return call.done; })) {
      calls_.erase(stream);
      if (session_) {
        session_->reset(stream, http2::ErrorCode::kCancel);
        write_locked();
      }
      outcome.error = "timeout";
      return outcome;
    }
    lock.unlock();
    if (!call.failure.empty()) {
      outcome.error = call.failure;
    } else if (call.grpc_status < 0) {
      // No gRPC status: an HTTP error from something that is not a gRPC server.
      outcome.error =
          call.http_status.empty() || call.http_status == "200" ? "protocol" : call.http_status;
    } else if (call.grpc_status != 0) {
      outcome.error = call.grpc_status < static_cast<int>(kStatusNames.size())
                          ? kStatusNames[call.grpc_status]
                          : "UNKNOWN";
      if (call.grpc_status == kDeadlineExceeded && Clock::now() >= deadline)
        outcome.error = "timeout";
      outcome.error_message = percent_decoded(call.grpc_message);
    }
    answers = std::move(call.messages);
    return outcome;
  }

 private:
  bool open_locked(std::unique_lock<std::mutex>& lock, Clock::time_point deadline) {
    if (session_) return true;
    if (reader_.joinable()) {
      // The last connection's reader fails its calls and leaves once its socket is shut.
      reader_left_.wait(lock, [this] { return reader_done_; });
      reader_.join();
      socket_.reset();
    }
    const auto colon = target_.rfind(':');
    std::string host = target_.substr(0, colon);
    if (host.size() >= 2 && host.front() == '[') host = host.substr(1, host.size() - 2);
    const std::string port = target_.substr(colon + 1);
    boost::system::error_code ec;
    tcp::resolver resolver(ioc_);
    const auto endpoints = resolver.resolve(host, port, ec);
    if (ec) return false;
    socket_ = std::make_unique<tcp::socket>(ioc_);
    bool connected = false;
    asio::async_connect(
        *socket_, endpoints,
        [&](boost::system::error_code error, const tcp::endpoint&) { connected = !error; });
    ioc_.restart();
    ioc_.run_for(std::max(Clock::duration::zero(), deadline - Clock::now()));
    if (!connected) {
      // Cancels a connect still under way, and runs its handler now, while `connected` lives.
      socket_->close(ec);
      ioc_.restart();
      ioc_.run();
      socket_.reset();
      return false;
    }
    socket_->set_option(tcp::no_delay(true), ec);
    http2::StreamHandler& handler = *this;
    session_ = std::make_unique<http2::Session>(http2::Role::kClient, handler);
    reader_done_ = false;
    reader_ = std::thread([this] { read(); });
    return write_locked();
  }

  // Writes what the session holds; on failure closes the connection (its reader then fails the
  // calls in flight).
  bool write_locked() {
    if (!session_ || session_->output().empty()) return session_ != nullptr;
    boost::system::error_code ec;
    asio::write(*socket_, asio::buffer(session_->output()), ec);
    session_->output().clear();
    if (ec) close_locked();
    return !ec;
  }

  void close_locked() {
    if (!socket_) return;
    boost::system::error_code ec;
    socket_->shutdown(tcp::socket::shutdown_both, ec);
    session_.reset();
  }

  // The reader thread: the socket is this connection's until the thread has left.
  void read() {
    std::array<char, 64 * 1024> buffer;
    tcp::socket& socket = *socket_;
    for (;;) {
      boost::system::error_code ec;
      const std::size_t n = socket.read_some(asio::buffer(buffer), ec);
      std::lock_guard lock(mutex_);
      const bool over = ec || !session_ || !session_->receive(std::string_view(buffer.data(), n));
      if (!over) {
        write_locked();
        continue;
      }
      session_.reset();
      for (auto& [stream, call] : calls_) finish(*call, "io");
      calls_.clear();
      socket.close(ec);
      reader_done_ = true;
      reader_left_.notify_all();
      return;
    }
  }

  void finish(PendingCall& call, const char* failure) {
    if (call.done) return;
    if (failure != nullptr) call.failure = failure;
    call.done = true;
    call.answered.notify_one();
  }

  void on_headers(std::uint32_t stream, std::vector<http2::Header> headers,
                  bool end_stream) override {
    const auto it = calls_.find(stream);
    if (it == calls_.end()) return;
    PendingCall& call = *it->second;
    for (auto& header : headers) {
      if (header.name == ":status") call.http_status = std::move(header.value);
      if (header.name == "grpc-status") call.grpc_status = std::atoi(header.value.c_str());
      if (header.name == "grpc-message") call.grpc_message = std::move(header.value);
    }
    if (end_stream) {
      calls_.erase(it);
      finish(call, nullptr);
    }
  }

  void on_data(std::uint32_t stream, std::string_view data, bool end_stream) override {
    const auto it = calls_.find(stream);
    if (it == calls_.end()) return;
    PendingCall& call = *it->second;
    call.inbound.append(data);
    std::size_t at = 0;
    while (call.inbound.size() - at >= protowire::kGrpcPrefixBytes) {
      const std::size_t length = protowire::grpc_frame_length(call.inbound.data() + at);
      if (call.inbound[at] != 0) {  // compressed: this client asked for none
        calls_.erase(it);
        session_->reset(stream, http2::ErrorCode::kCancel);
        return finish(call, "protocol");
      }
      if (call.inbound.size() - at - protowire::kGrpcPrefixBytes < length) break;
      call.messages.emplace_back(call.inbound, at + protowire::kGrpcPrefixBytes, length);
      at += protowire::kGrpcPrefixBytes + length;
    }
    call.inbound.erase(0, at);
    session_->consumed(stream, data.size());
    if (end_stream) {
      calls_.erase(it);
      finish(call, call.inbound.empty() ? nullptr : "protocol");
    }
  }

  void on_reset(std::uint32_t stream) override {
    const auto it = calls_.find(stream);
    if (it == calls_.end()) return;
    PendingCall& call = *it->second;
    calls_.erase(it);
    finish(call, "io");
  }

  const std::string target_;
  std::mutex mutex_;
  asio::io_context ioc_;  // for connecting only: the socket is used blocking
  std::unique_ptr<tcp::socket> socket_;
  std::unique_ptr<http2::Session> session_;  // null while closed
  std::thread reader_;
  bool reader_done_ = false;
  std::condition_variable reader_left_;
  std::map<std::uint32_t, PendingCall*> calls_;
};

// The connection to `target` while a transport holds it, else a new one: a run's workers share
// one, which goes with the last of them.
std::shared_ptr<Connection> shared_connection(const std::string& target) {
  static std::mutex mutex;
  static std::map<std::string, std::weak_ptr<Connection>> connections;
  std::lock_guard lock(mutex);
  std::shared_ptr<Connection> connection = connections[target].lock();
  if (!connection) {
    connection = std::make_shared<Connection>(target);
    connections[target] = connection;
  }
  return connection;
}

class GrpcTransport final : public Transport {
 public:
  GrpcTransport(const std::string& target, std::chrono::milliseconds timeout)
      : timeout_(timeout), connection_(shared_connection(target)) {}

  // Until the connection is open or has failed to (nothing listening: at once, as a refused
  // TCP connect over HTTP), at most --timeout; a failure is counted by the calls.
  void connect() override { connection_->connect(Clock::now() + timeout_); }

  std::size_t retries() const override { return 0; }

  Outcome exchange(const Dialect& dialect, std::span<const Sample* const> batch,
                   Task task) override {
    const GrpcRequest request = dialect.build_grpc(batch, task);
    std::vector<http2::Header> metadata;
    for (const auto& [name, value] : dialect.options().headers) {
      std::string key = lower(name);
      if (key == "content-type" || key == "accept") continue;
      metadata.push_back({std::move(key), value});
    }
    metadata.push_back({"x-request-id", "onepass-bench-" + std::to_string(++request_ids)});
    std::vector<std::string> answers;
    Outcome outcome = connection_->call(request.method, request.messages, metadata,
                                        Clock::now() + timeout_, answers);
    if (!outcome.error.empty()) return outcome;
    try {
      outcome.answers = dialect.parse_grpc(answers, batch.size(), task);
    } catch (const Error&) {
      outcome.error = "bad_response";
    }
    return outcome;
  }

 private:
  std::chrono::milliseconds timeout_;
  std::shared_ptr<Connection> connection_;
};

}  // namespace

std::unique_ptr<Transport> open_grpc_transport(const std::string& target,
                                               std::chrono::milliseconds timeout) {
  return std::make_unique<GrpcTransport>(target, timeout);
}

}  // namespace onepass::bench
