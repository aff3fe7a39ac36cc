// `onepass serve --grpc-port`: the Open Inference Protocol v2's gRPC service
// (inference.GRPCInferenceService, grpc_predict_v2.proto) on the same runtime::InferenceService,
// batcher and admission as HTTP. Calls run on gRPC's callback API: ModelInfer submits and
// returns, and the runtime's completion finishes the call, so no thread waits on a batch.
//
// Errors in gRPC's terms (status.cpp): bad input INVALID_ARGUMENT, unknown model NOT_FOUND,
// admission RESOURCE_EXHAUSTED, draining UNAVAILABLE, API key UNAUTHENTICATED, a deadline that
// passed DEADLINE_EXCEEDED. Thread-safe once started.
#pragma once

#include <chrono>
#include <cstddef>
#include <memory>
#include <string>

#include "api/common/call.h"
#include "runtime/service.h"

namespace onepass::api::kserve_grpc {

struct GrpcOptions {
  std::string host = "0.0.0.0";
  int port = 0;  // 0: any free port
  // The largest message received (the request) and sent (the answer).
  std::size_t max_message_bytes = 4u << 20;
};

class GrpcServer {
 public:
  // `options` (the API key, batch limits) and `model_urls` (the folders RepositoryModelLoad
  // reads) are the HTTP API's, and outlive the server.
  GrpcServer(runtime::InferenceService& service, const ApiOptions& options, ModelUrls& model_urls,
             GrpcOptions grpc_options);
  ~GrpcServer();

  // Binds and starts serving; throws onepass::Error kUnavailable when the port cannot be bound.
  void start();
  // HOST:PORT as bound.
  std::string address() const;
  // New calls (all but ServerLive and ServerReady) are refused with UNAVAILABLE from now on.
  void begin_drain();
  // Stops accepting calls, lets those in flight finish for up to `grace`, then cancels the rest.
  void shutdown(std::chrono::milliseconds grace);

 private:
  class Service;
  std::unique_ptr<Service> service_;
  GrpcOptions grpc_options_;
  int bound_port_ = 0;
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace onepass::api::kserve_grpc
