// `onepass serve --grpc-port`: one gRPC server for every gRPC dialect (kserve_grpc/: the Open
// Inference Protocol v2; tei_grpc/: TEI's tei.v1 services) on the same
// runtime::InferenceService, batcher and admission as HTTP. gRPC is HTTP/2 (src/http2) on Asio,
// as REST is HTTP/1.1 on it: a fixed number of I/O threads serve the connections, each on its
// own strand, where its calls' handlers run too (connection.h, stream_call.h); a handler
// submits and returns, and the runtime's completion posts the answer back to the strand, so
// no thread waits on a batch. Methods are found by their full name, "/<service>/<method>".
//
// Errors in gRPC's terms (status.cpp): bad input INVALID_ARGUMENT, unknown model NOT_FOUND,
// admission RESOURCE_EXHAUSTED, draining UNAVAILABLE, API key UNAUTHENTICATED, a deadline that
// passed DEADLINE_EXCEEDED. Thread-safe once started.
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "api/common/call.h"
#include "api/grpc_server/call.h"
#include "api/grpc_server/connection.h"
#include "runtime/service.h"

namespace onepass::api::grpc_server {

struct GrpcOptions {
  std::string host = "0.0.0.0";
  int port = 0;  // 0: any free port
  // The largest message received (the request) and sent (the answer).
  std::size_t max_message_bytes = 4u << 20;
  // I/O threads (serve: as many as HTTP's).
  int threads = 2;
};

class GrpcServer final : private CallRouter {
 public:
  // `options` (the API key, batch limits) and `model_urls` (the folders RepositoryModelLoad
  // reads) are the HTTP API's, and outlive the server.
  GrpcServer(runtime::InferenceService& service, const ApiOptions& options, ModelUrls& model_urls,
             GrpcOptions grpc_options);
  ~GrpcServer();

  // What a dialect's service factory needs (kserve_grpc::service(), tei_grpc::services()).
  const ServiceContext& context() const { return context_; }
  // Serves `table`'s methods; before start() only.
  void add(ServiceTable table);

  // Binds and starts serving; throws onepass::Error kUnavailable when the port cannot be bound.
  void start();
  // HOST:PORT as bound.
  std::string address() const;
  // New calls (all but the liveness and readiness ones) are refused with UNAVAILABLE from now on.
  void begin_drain();
  // Stops accepting connections, sends GOAWAY on each, lets the calls in flight finish for up
  // to `grace`, then cancels the rest.
  void shutdown(std::chrono::milliseconds grace);

 private:
  std::shared_ptr<StreamCall> open(const std::shared_ptr<Connection>& connection,
                                   std::uint32_t stream,
                                   std::vector<http2::Header> headers) override;
  // The API key (unless `access` is a health check) and draining, as REST checks them.
  void admit(const CallContext& context, Access access) const;

  std::atomic<bool> draining_{false};
  ServiceContext context_;
  GrpcOptions grpc_options_;
  std::vector<ServiceTable> tables_;
  // "/<service>/<method>" to its table and method, filled by start().
  std::map<std::string, std::pair<const ServiceTable*, const Method*>, std::less<>> methods_;
  std::string served_;  // the services' names, for UNIMPLEMENTED's message
  int bound_port_ = 0;
  struct Impl;
  friend struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace onepass::api::grpc_server
