#include "api/grpc_server/status.h"

#include "api/common/api_error.h"

namespace onepass::api::grpc_server {

namespace {

StatusCode code_of(ApiErrorKind kind) {
  switch (kind) {
    case ApiErrorKind::kBadRequest:
    case ApiErrorKind::kUnsupportedMedia:
    case ApiErrorKind::kValidation:
    case ApiErrorKind::kEmpty:
    case ApiErrorKind::kInvalidInput:
    case ApiErrorKind::kTokenizer:
    case ApiErrorKind::kTooManyInputs:
      return StatusCode::kInvalidArgument;
    case ApiErrorKind::kUnauthorized:
      return StatusCode::kUnauthenticated;
    case ApiErrorKind::kNotFound:
      return StatusCode::kNotFound;
    case ApiErrorKind::kMethodNotAllowed:
      return StatusCode::kUnimplemented;
    case ApiErrorKind::kConflict:
      return StatusCode::kAlreadyExists;
    case ApiErrorKind::kPayloadTooLarge:
    case ApiErrorKind::kHeaderTooLarge:
    case ApiErrorKind::kOverloaded:
    case ApiErrorKind::kInsufficientStorage:
      return StatusCode::kResourceExhausted;
    case ApiErrorKind::kUnavailable:
      return StatusCode::kUnavailable;
    case ApiErrorKind::kDeadlineExceeded:
      return StatusCode::kDeadlineExceeded;
    case ApiErrorKind::kBackend:
    case ApiErrorKind::kInternal:
      return StatusCode::kInternal;
  }
  return StatusCode::kInternal;
}

}  // namespace

CallStatus status_of(std::exception_ptr error) {
  const ApiError api_error = to_api_error(error);
  return {code_of(api_error.kind()), api_error.what(), default_http_status(api_error.kind())};
}

}  // namespace onepass::api::grpc_server
