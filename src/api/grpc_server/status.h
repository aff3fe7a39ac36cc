// The one mapping of the API's errors (api/common/api_error.h) to gRPC status codes, with the
// HTTP status REST would answer beside it (the request metrics and log lines keep REST's codes).
#pragma once

#include <grpcpp/support/status.h>

#include <exception>

namespace onepass::api::grpc_server {

struct CallStatus {
  grpc::Status status;
  int http_status = 200;
};

CallStatus status_of(std::exception_ptr error);

}  // namespace onepass::api::grpc_server
