#include "api/grpc_server/status.h"

#include "api/common/api_error.h"

namespace onepass::api::grpc_server {

namespace {

grpc::StatusCode code_of(ApiErrorKind kind) {
  switch (kind) {
    case ApiErrorKind::kBadRequest:
    case ApiErrorKind::kUnsupportedMedia:
    case ApiErrorKind::kValidation:
    case ApiErrorKind::kEmpty:
    case ApiErrorKind::kInvalidInput:
    case ApiErrorKind::kTokenizer:
    case ApiErrorKind::kTooManyInputs:
      return grpc::StatusCode::INVALID_ARGUMENT;
    case ApiErrorKind::kUnauthorized:
      return grpc::StatusCode::UNAUTHENTICATED;
    case ApiErrorKind::kNotFound:
      return grpc::StatusCode::NOT_FOUND;
    case ApiErrorKind::kMethodNotAllowed:
      return grpc::StatusCode::UNIMPLEMENTED;
    case ApiErrorKind::kConflict:
      return grpc::StatusCode::ALREADY_EXISTS;
    case ApiErrorKind::kPayloadTooLarge:
    case ApiErrorKind::kHeaderTooLarge:
    case ApiErrorKind::kOverloaded:
    case ApiErrorKind::kInsufficientStorage:
      return grpc::StatusCode::RESOURCE_EXHAUSTED;
    case ApiErrorKind::kUnavailable:
      return grpc::StatusCode::UNAVAILABLE;
    case ApiErrorKind::kDeadlineExceeded:
      return grpc::StatusCode::DEADLINE_EXCEEDED;
    case ApiErrorKind::kBackend:
    case ApiErrorKind::kInternal:
      return grpc::StatusCode::INTERNAL;
  }
  return grpc::StatusCode::INTERNAL;
}

}  // namespace

CallStatus status_of(std::exception_ptr error) {
  const ApiError api_error = to_api_error(error);
  return {grpc::Status(code_of(api_error.kind()), api_error.what()),
          default_http_status(api_error.kind())};
}

}  // namespace onepass::api::grpc_server
