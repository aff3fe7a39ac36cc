#include "api/grpc_server/server.h"

#include <absl/synchronization/mutex.h>
#include <grpcpp/security/server_credentials.h>
#include <grpcpp/server.h>
#include <grpcpp/server_builder.h>

#include <algorithm>
#include <string_view>
#include <thread>

#include "api/common/api_error.h"
#include "api/common/api_key.h"
#include "base/error.h"
#include "base/log.h"

namespace onepass::api::grpc_server {

namespace {

std::string_view view(const grpc::string_ref& ref) { return {ref.data(), ref.size()}; }

std::string host_port(const std::string& host, int port) {
  const bool ipv6 = host.find(':') != std::string::npos && host.front() != '[';
  return (ipv6 ? "[" + host + "]" : host) + ":" + std::to_string(port);
}

}  // namespace

// Declared in the order they must go: the threads, the server, its queues, the service.
struct GrpcServer::Impl {
  grpc::AsyncGenericService generic;
  std::vector<std::unique_ptr<grpc::ServerCompletionQueue>> queues;
  std::unique_ptr<grpc::Server> server;
  std::vector<std::thread> threads;
  std::atomic<std::size_t> live{0};  // calls not yet over (call.h)
};

// Waits on one completion queue for the next call of any method: hands it to dispatch() and
// waits for the one after, until the server shuts down.
class GrpcServer::Acceptor final : public Event {
 public:
  Acceptor(GrpcServer& server, grpc::ServerCompletionQueue& queue)
      : server_(server), queue_(queue) {
    request();
  }

  void done(bool ok) override {
    if (!ok) {  // the server is shutting down
      delete this;
      return;
    }
    Accepted call = std::move(next_);
    request();  // first, so that nothing dispatch() throws stops the queue taking calls
    server_.dispatch(std::move(call));
  }

 private:
  void request() {
    next_.context = std::make_unique<grpc::GenericServerContext>();
    next_.stream = std::make_unique<grpc::GenericServerAsyncReaderWriter>(next_.context.get());
    server_.impl_->generic.RequestCall(next_.context.get(), next_.stream.get(), &queue_, &queue_,
                                       this);
  }

  GrpcServer& server_;
  grpc::ServerCompletionQueue& queue_;
  Accepted next_;
};

namespace {

// One queue's thread: every event goes to its tag.
void poll(grpc::ServerCompletionQueue& queue) {
  void* tag = nullptr;
  bool ok = false;
  while (queue.Next(&tag, &ok)) {
    try {
      static_cast<Event*>(tag)->done(ok);
    } catch (const std::exception& e) {
      log::error("grpc", log::Fields().add("error", e.what()));
    }
  }
}

}  // namespace

GrpcServer::GrpcServer(runtime::InferenceService& service, const ApiOptions& options,
                       ModelUrls& model_urls, GrpcOptions grpc_options)
    : context_{service, options, model_urls, draining_},
      grpc_options_(std::move(grpc_options)),
      impl_(std::make_unique<Impl>()) {}

GrpcServer::~GrpcServer() {
  if (impl_->server) shutdown(std::chrono::milliseconds(0));
}

void GrpcServer::dispatch(Accepted accepted) {
  const auto it = methods_.find(accepted.context->method());
  if (it == methods_.end()) {
    serve_unknown(std::move(accepted), context_.service, served_, impl_->live);
    return;
  }
  const grpc::ServerContextBase& context = *accepted.context;
  const Access access = it->second.second->access;
  serve_call(
      std::move(accepted), context_.service, *it->second.first, *it->second.second,
      [this, &context, access] { admit(context, access); }, impl_->live);
}

void GrpcServer::admit(const grpc::ServerContextBase& context, Access access) const {
  const ApiOptions& options = context_.options;
  if (access == Access::kClosed && !options.api_key.empty()) {
    const auto& all = context.client_metadata();
    const auto it = all.find("authorization");
    if (it == all.end() || !bearer_matches(view(it->second), options.api_key))
      throw ApiError(ApiErrorKind::kUnauthorized, "missing or invalid API key");
  }
  if (draining_ && access == Access::kClosed)
    throw ApiError(ApiErrorKind::kUnavailable, "the server is shutting down");
}

void GrpcServer::add(ServiceTable table) { tables_.push_back(std::move(table)); }

void GrpcServer::start() {
  // Debian builds Abseil without NDEBUG, so every absl::Mutex lock inside gRPC would search a
  // lock-order graph for deadlocks (2-3% of the CPU of a small model's call).
  absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);
  methods_.clear();
  served_.clear();
  for (const auto& table : tables_) {
    served_ += (served_.empty() ? "" : ", ") + table.name;
    for (const auto& method : table.methods)
      methods_["/" + table.name + "/" + method.name] = {&table, &method};
  }
  grpc::ServerBuilder builder;
  const std::string wanted = host_port(grpc_options_.host, grpc_options_.port);
  builder.AddListeningPort(wanted, grpc::InsecureServerCredentials(), &bound_port_);
  // gRPC shares a port between processes by default (SO_REUSEPORT): a second server on a busy
  // port would start and take half the calls instead of failing.
  builder.AddChannelArgument(GRPC_ARG_ALLOW_REUSEPORT, 0);
  const int limit = static_cast<int>(
      std::min<std::size_t>(grpc_options_.max_message_bytes, std::size_t{INT32_MAX}));
  builder.SetMaxReceiveMessageSize(limit);
  builder.SetMaxSendMessageSize(limit);
  builder.RegisterAsyncGenericService(&impl_->generic);
  const int threads = std::max(1, grpc_options_.threads);
  for (int i = 0; i < threads; ++i) impl_->queues.push_back(builder.AddCompletionQueue());
  impl_->server = builder.BuildAndStart();
  if (!impl_->server || bound_port_ == 0) {
    impl_->server.reset();
    for (auto& queue : impl_->queues) queue->Shutdown();
    for (auto& queue : impl_->queues) poll(*queue);  // drains it: nothing was asked of it
    impl_->queues.clear();
    throw Error(ErrorKind::kUnavailable, "cannot listen for gRPC on " + wanted);
  }
  for (auto& queue : impl_->queues) {
    new Acceptor(*this, *queue);  // deletes itself when the server shuts down
    impl_->threads.emplace_back(poll, std::ref(*queue));
  }
}

std::string GrpcServer::address() const { return host_port(grpc_options_.host, bound_port_); }

void GrpcServer::begin_drain() { draining_ = true; }

void GrpcServer::shutdown(std::chrono::milliseconds grace) {
  if (!impl_->server) return;
  draining_ = true;
  impl_->server->Shutdown(std::chrono::system_clock::now() + grace);
  // A call cancelled at the deadline may still wait for the runtime's answer, and its last
  // operations need a queue that is still polled.
  while (impl_->live > 0) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  for (auto& queue : impl_->queues) queue->Shutdown();
  for (auto& thread : impl_->threads) thread.join();
  impl_->threads.clear();
  impl_->server.reset();
  impl_->queues.clear();
}

}  // namespace onepass::api::grpc_server
