// The HTTP API of onepass: every dialect of docs/api.md behind one http::Handler. Routing, the API
// key, draining and the per-request metrics live here; the dialects live in their folders (each
// with its routes and error shape in a DialectSpec, common/dialect.h) and the error mapping in
// common/api_error.
#pragma once

#include <atomic>
#include <memory>
#include <string>
#include <string_view>

#include "api/common/call.h"
#include "http/message.h"
#include "runtime/service.h"

namespace onepass::api {

class Api {
 public:
  Api(runtime::InferenceService& service, ApiOptions options);
  ~Api();

  // http::Handler.
  void handle(http::Request request, http::Respond respond);
  // http::ErrorResponder: transport errors in the dialect of the route they were meant for.
  http::Response transport_error(int status, std::string_view target, std::string_view message);

  // While draining every route but liveness and metrics answers 503.
  void begin_drain();
  ModelUrls& model_urls() { return urls_; }
  // What the other transports (gRPC) share with HTTP: the API key, batch limits, version.
  const ApiOptions& options() const { return options_; }

 private:
  runtime::InferenceService& service_;
  ApiOptions options_;
  ModelUrls urls_;
  std::atomic<bool> draining_{false};
};

}  // namespace onepass::api
