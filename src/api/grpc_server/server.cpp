#include "api/grpc_server/server.h"

#include <algorithm>
#include <boost/asio/bind_executor.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <future>
#include <mutex>
#include <optional>
#include <string_view>
#include <thread>

#include "api/common/api_error.h"
#include "api/common/api_key.h"
#include "base/error.h"

namespace onepass::api::grpc_server {

namespace asio = boost::asio;
using tcp = asio::ip::tcp;
using error_code = boost::system::error_code;

namespace {

std::string host_port(const std::string& host, int port) {
  const bool ipv6 = host.find(':') != std::string::npos && host.front() != '[';
  return (ipv6 ? "[" + host + "]" : host) + ":" + std::to_string(port);
}

// grpc-timeout (the gRPC HTTP/2 protocol): up to 8 digits and a unit, H M S m u n. A value that
// does not parse sets no deadline.
std::chrono::system_clock::time_point deadline_of(std::string_view timeout) {
  const auto none = std::chrono::system_clock::time_point::max();
  if (timeout.size() < 2 || timeout.size() > 9) return none;
  std::int64_t value = 0;
  for (const char c : timeout.substr(0, timeout.size() - 1)) {
    if (c < '0' || c > '9') return none;
    value = value * 10 + (c - '0');
  }
  std::chrono::nanoseconds span;
  switch (timeout.back()) {
    case 'H':
      span = std::chrono::hours(value);
      break;
    case 'M':
      span = std::chrono::minutes(value);
      break;
    case 'S':
      span = std::chrono::seconds(value);
      break;
    case 'm':
      span = std::chrono::milliseconds(value);
      break;
    case 'u':
      span = std::chrono::microseconds(value);
      break;
    case 'n':
      span = std::chrono::nanoseconds(value);
      break;
    default:
      return none;
  }
  return std::chrono::system_clock::now() +
         std::chrono::duration_cast<std::chrono::system_clock::duration>(span);
}

// What a client has to send its preface and SETTINGS in (REST's header timeout).
constexpr std::chrono::milliseconds kHandshakeTimeout{30000};

// A call of a method no service has: UNIMPLEMENTED, naming the served services.
const ServiceTable kNoService{"", "grpc", {}};
const Method kUnknownMethod{"unknown", Access::kLiveness, Shape::kUnary, {}, {}, 0};

}  // namespace

// Declared in the order they must go: the threads, the acceptor and connections, the context
// (whose unfinished handlers may still hold calls), the count the calls keep.
struct GrpcServer::Impl {
  std::atomic<std::size_t> live{0};  // calls not yet over (stream_call.h)
  asio::io_context ioc;
  std::optional<asio::executor_work_guard<asio::io_context::executor_type>> work;
  asio::strand<asio::io_context::executor_type> accept_strand{asio::make_strand(ioc)};
  tcp::acceptor acceptor{ioc};
  std::mutex connections_mutex;
  std::vector<std::weak_ptr<Connection>> connections;
  std::vector<std::thread> threads;
  bool started = false;

  void accept(GrpcServer& server) {
    CallRouter& router = server;
    auto strand = asio::make_strand(ioc);
    acceptor.async_accept(
        strand, asio::bind_executor(accept_strand, [this, &server, &router, strand](
                                                       error_code ec, tcp::socket socket) {
          if (!ec) {
            auto connection = std::make_shared<Connection>(strand, std::move(socket), router,
                                                           http2::SessionLimits{});
            remember(connection);
            connection->start(kHandshakeTimeout);
          }
          if (acceptor.is_open()) accept(server);
        }));
  }

  void remember(const std::shared_ptr<Connection>& connection) {
    std::lock_guard lock(connections_mutex);
    std::erase_if(connections, [](const auto& weak) { return weak.expired(); });
    connections.push_back(connection);
  }

  std::vector<std::shared_ptr<Connection>> open_connections() {
    std::lock_guard lock(connections_mutex);
    std::vector<std::shared_ptr<Connection>> open;
    for (const auto& weak : connections)
      if (auto connection = weak.lock()) open.push_back(std::move(connection));
    return open;
  }
};

GrpcServer::GrpcServer(runtime::InferenceService& service, const ApiOptions& options,
                       ModelUrls& model_urls, GrpcOptions grpc_options)
    : context_{service, options, model_urls, draining_},
      grpc_options_(std::move(grpc_options)),
      impl_(std::make_unique<Impl>()) {}

GrpcServer::~GrpcServer() { shutdown(std::chrono::milliseconds(0)); }

std::shared_ptr<StreamCall> GrpcServer::open(const std::shared_ptr<Connection>& connection,
                                             std::uint32_t stream,
                                             std::vector<http2::Header> headers) {
  std::string_view verb, path, content_type, timeout;
  std::vector<http2::Header> metadata;
  for (const auto& header : headers) {
    if (header.name == ":method") verb = header.value;
    if (header.name == ":path") path = header.value;
    if (header.name == "content-type") content_type = header.value;
    if (header.name == "grpc-timeout") timeout = header.value;
  }
  // Not gRPC: an HTTP answer and no call (the gRPC HTTP/2 protocol's "HTTP 415").
  const int http_refusal = verb != "POST"                                     ? 405
                           : content_type.substr(0, 16) != "application/grpc" ? 415
                                                                              : 0;
  if (http_refusal != 0) {
    connection->session().send_trailers(stream, {{":status", std::to_string(http_refusal)}});
    connection->flush_output();
    return nullptr;
  }
  const auto deadline = deadline_of(timeout);
  const auto it = methods_.find(path);
  const bool known = it != methods_.end();
  const ServiceTable& table = known ? *it->second.first : kNoService;
  const Method& method = known ? *it->second.second : kUnknownMethod;
  for (auto& header : headers)
    if (!header.name.empty() && header.name.front() != ':') metadata.push_back(std::move(header));
  auto call = std::make_shared<StreamCall>(
      connection, connection->strand(), stream, CallContext(std::move(metadata), deadline),
      context_.service, table, method, grpc_options_.max_message_bytes, impl_->live);
  call->start([&] {
    if (!known)
      throw ApiError(ApiErrorKind::kMethodNotAllowed, "no such method: onepass serves " + served_);
    admit(call->context(), method.access);
  });
  return call;
}

void GrpcServer::admit(const CallContext& context, Access access) const {
  const ApiOptions& options = context_.options;
  if (access == Access::kClosed && !options.api_key.empty()) {
    const std::string* authorization = context.metadata("authorization");
    if (authorization == nullptr || !bearer_matches(*authorization, options.api_key))
      throw ApiError(ApiErrorKind::kUnauthorized, "missing or invalid API key");
  }
  if (draining_ && access == Access::kClosed)
    throw ApiError(ApiErrorKind::kUnavailable, "the server is shutting down");
}

void GrpcServer::add(ServiceTable table) { tables_.push_back(std::move(table)); }

void GrpcServer::start() {
  methods_.clear();
  served_.clear();
  for (const auto& table : tables_) {
    served_ += (served_.empty() ? "" : ", ") + table.name;
    for (const auto& method : table.methods)
      methods_["/" + table.name + "/" + method.name] = {&table, &method};
  }
  Impl& impl = *impl_;
  const std::string wanted = host_port(grpc_options_.host, grpc_options_.port);
  error_code ec;
  auto address = asio::ip::make_address(grpc_options_.host, ec);
  if (ec) {
    tcp::resolver resolver(impl.ioc);
    const auto results = resolver.resolve(grpc_options_.host, "", ec);
    if (!ec && !results.empty()) address = results.begin()->endpoint().address();
  }
  const tcp::endpoint endpoint(address, static_cast<unsigned short>(grpc_options_.port));
  if (!ec) impl.acceptor.open(endpoint.protocol(), ec);
  if (!ec) impl.acceptor.set_option(asio::socket_base::reuse_address(true), ec);
  if (!ec) impl.acceptor.bind(endpoint, ec);
  if (!ec) impl.acceptor.listen(asio::socket_base::max_listen_connections, ec);
  if (!ec) bound_port_ = impl.acceptor.local_endpoint(ec).port();
  if (ec) {
    error_code ignored;
    impl.acceptor.close(ignored);
    throw Error(ErrorKind::kUnavailable,
                "cannot listen for gRPC on " + wanted + ": " + ec.message());
  }
  impl.started = true;
  impl.work.emplace(impl.ioc.get_executor());
  asio::post(impl.accept_strand, [this] { impl_->accept(*this); });
  const int threads = std::max(1, grpc_options_.threads);
  for (int i = 0; i < threads; ++i) impl.threads.emplace_back([&impl] { impl.ioc.run(); });
}

std::string GrpcServer::address() const { return host_port(grpc_options_.host, bound_port_); }

void GrpcServer::begin_drain() { draining_ = true; }

void GrpcServer::shutdown(std::chrono::milliseconds grace) {
  Impl& impl = *impl_;
  if (!impl.started) return;
  impl.started = false;
  draining_ = true;
  std::promise<void> closed;
  asio::post(impl.accept_strand, [&impl, &closed] {
    error_code ec;
    impl.acceptor.close(ec);
    closed.set_value();
  });
  closed.get_future().wait();
  for (const auto& connection : impl.open_connections()) connection->go_away();
  const auto deadline = std::chrono::steady_clock::now() + grace;
  const auto idle = [&impl] { return impl.live == 0 && impl.open_connections().empty(); };
  while (!idle() && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  for (const auto& connection : impl.open_connections()) connection->close();
  // A call cancelled at the deadline may still wait for the runtime's answer, which its
  // connection's strand must still run.
  while (impl.live > 0) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  const auto linger = std::chrono::steady_clock::now() + std::chrono::milliseconds(100);
  while (!impl.open_connections().empty() && std::chrono::steady_clock::now() < linger)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  impl.work.reset();
  impl.ioc.stop();
  for (auto& thread : impl.threads) thread.join();
  impl.threads.clear();
}

}  // namespace onepass::api::grpc_server
