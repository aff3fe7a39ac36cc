#include "api/grpc_server/server.h"

#include <grpcpp/security/server_credentials.h>
#include <grpcpp/server.h>
#include <grpcpp/server_builder.h>

#include <string_view>

#include "api/common/api_error.h"
#include "api/common/api_key.h"
#include "base/error.h"

namespace onepass::api::grpc_server {

namespace {

std::string_view view(const grpc::string_ref& ref) { return {ref.data(), ref.size()}; }

std::string host_port(const std::string& host, int port) {
  const bool ipv6 = host.find(':') != std::string::npos && host.front() != '[';
  return (ipv6 ? "[" + host + "]" : host) + ":" + std::to_string(port);
}

}  // namespace

// gRPC's generic callback service: every call comes here and is dispatched by its full name.
class GrpcServer::Generic final : public grpc::CallbackGenericService {
 public:
  explicit Generic(GrpcServer& server) : server_(server) {}

  grpc::ServerGenericBidiReactor* CreateReactor(
      grpc::GenericCallbackServerContext* context) override {
    const auto it = server_.methods_.find(context->method());
    if (it == server_.methods_.end())
      return make_unknown(*context, server_.context_.service, server_.served_);
    const Access access = it->second.second->access;
    return make_reactor(*context, server_.context_.service, *it->second.first, *it->second.second,
                        [this, context, access] { admit(*context, access); });
  }

 private:
  // The API key (unless `access` is a health check) and draining, as REST checks them.
  void admit(const grpc::CallbackServerContext& context, Access access) const {
    const ApiOptions& options = server_.context_.options;
    if (access == Access::kClosed && !options.api_key.empty()) {
      const auto& all = context.client_metadata();
      const auto it = all.find("authorization");
      if (it == all.end() || !bearer_matches(view(it->second), options.api_key))
        throw ApiError(ApiErrorKind::kUnauthorized, "missing or invalid API key");
    }
    if (server_.draining_ && access == Access::kClosed)
      throw ApiError(ApiErrorKind::kUnavailable, "the server is shutting down");
  }

  GrpcServer& server_;
};

struct GrpcServer::Impl {
  std::unique_ptr<grpc::Server> server;
};

GrpcServer::GrpcServer(runtime::InferenceService& service, const ApiOptions& options,
                       ModelUrls& model_urls, GrpcOptions grpc_options)
    : context_{service, options, model_urls, draining_},
      grpc_options_(std::move(grpc_options)),
      generic_(std::make_unique<Generic>(*this)),
      impl_(std::make_unique<Impl>()) {}

GrpcServer::~GrpcServer() {
  if (impl_->server) shutdown(std::chrono::milliseconds(0));
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
  builder.RegisterCallbackGenericService(generic_.get());
  impl_->server = builder.BuildAndStart();
  if (!impl_->server || bound_port_ == 0)
    throw Error(ErrorKind::kUnavailable, "cannot listen for gRPC on " + wanted);
}

std::string GrpcServer::address() const { return host_port(grpc_options_.host, bound_port_); }

void GrpcServer::begin_drain() { draining_ = true; }

void GrpcServer::shutdown(std::chrono::milliseconds grace) {
  if (!impl_->server) return;
  draining_ = true;
  impl_->server->Shutdown(std::chrono::system_clock::now() + grace);
  impl_->server->Wait();
  impl_->server.reset();
}

}  // namespace onepass::api::grpc_server
