// The one mapping of the API's errors (api/common/api_error.h) to gRPC status codes, with the
// HTTP status REST would answer beside it (the request metrics and log lines keep REST's codes).
#pragma once

#include <exception>
#include <string>

namespace onepass::api::grpc_server {

// gRPC's status codes (doc/statuscodes.md in the gRPC repository), as sent in grpc-status.
enum class StatusCode {
  kOk = 0,
  kCancelled = 1,
  kUnknown = 2,
  kInvalidArgument = 3,
  kDeadlineExceeded = 4,
  kNotFound = 5,
  kAlreadyExists = 6,
  kPermissionDenied = 7,
  kResourceExhausted = 8,
  kFailedPrecondition = 9,
  kAborted = 10,
  kOutOfRange = 11,
  kUnimplemented = 12,
  kInternal = 13,
  kUnavailable = 14,
  kDataLoss = 15,
  kUnauthenticated = 16,
};

struct CallStatus {
  StatusCode code = StatusCode::kOk;
  std::string message;
  int http_status = 200;

  bool ok() const { return code == StatusCode::kOk; }
};

CallStatus status_of(std::exception_ptr error);

}  // namespace onepass::api::grpc_server
