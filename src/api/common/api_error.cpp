// The one place where errors become HTTP statuses and dialect error bodies.
#include "api/common/api_error.h"

#include <nlohmann/json.hpp>

#include "api/common/dialect.h"
#include "api/common/json_writer.h"
#include "base/error.h"
#include "runtime/field_error.h"

namespace onepass::api {

ApiError to_api_error(std::exception_ptr error) {
  try {
    std::rethrow_exception(error);
  } catch (const ApiError& e) {
    return e;
  } catch (const runtime::FieldError& e) {
    const ApiErrorKind kind = e.problem() == runtime::FieldProblem::kTooManyInputs
                                  ? ApiErrorKind::kTooManyInputs
                                  : ApiErrorKind::kValidation;
    return {kind, e.what(), e.field()};
  } catch (const Error& e) {
    switch (e.kind()) {
      case ErrorKind::kInvalidArgument:
        return {ApiErrorKind::kValidation, e.what()};
      case ErrorKind::kInvalidInput:
        return {ApiErrorKind::kInvalidInput, e.what()};
      case ErrorKind::kUnsupported:
        return {ApiErrorKind::kValidation, e.what()};
      case ErrorKind::kNotFound:
        return {ApiErrorKind::kNotFound, e.what()};
      case ErrorKind::kOverloaded:
        return {ApiErrorKind::kOverloaded, e.what()};
      case ErrorKind::kInvalidModel:  // a model that failed to load: not ready
      case ErrorKind::kUnavailable:
        return {ApiErrorKind::kUnavailable, e.what()};
      case ErrorKind::kBackend:
        return {ApiErrorKind::kBackend, e.what()};
      case ErrorKind::kDeadlineExceeded:
        return {ApiErrorKind::kDeadlineExceeded, e.what()};
      case ErrorKind::kInternal:
        return {ApiErrorKind::kInternal, e.what()};
    }
    return {ApiErrorKind::kInternal, e.what()};
  } catch (const nlohmann::json::exception& e) {
    return {ApiErrorKind::kValidation, e.what()};
  } catch (const std::bad_alloc&) {
    return {ApiErrorKind::kInsufficientStorage, "out of memory"};
  } catch (const std::exception& e) {
    return {ApiErrorKind::kInternal, std::string("internal error: ") + e.what()};
  } catch (...) {
    return {ApiErrorKind::kInternal, "internal error"};
  }
}

int default_http_status(ApiErrorKind kind) {
  switch (kind) {
    case ApiErrorKind::kBadRequest:
      return 400;
    case ApiErrorKind::kUnsupportedMedia:
      return 415;
    case ApiErrorKind::kValidation:
      return 422;
    case ApiErrorKind::kEmpty:
      return 400;
    case ApiErrorKind::kInvalidInput:
    case ApiErrorKind::kTokenizer:
    case ApiErrorKind::kTooManyInputs:
      return 422;
    case ApiErrorKind::kUnauthorized:
      return 401;
    case ApiErrorKind::kNotFound:
      return 404;
    case ApiErrorKind::kMethodNotAllowed:
      return 405;
    case ApiErrorKind::kConflict:
      return 409;
    case ApiErrorKind::kPayloadTooLarge:
      return 413;
    case ApiErrorKind::kHeaderTooLarge:
      return 431;
    case ApiErrorKind::kOverloaded:
      return 429;
    case ApiErrorKind::kUnavailable:
      return 503;
    case ApiErrorKind::kBackend:
      return 424;
    case ApiErrorKind::kDeadlineExceeded:
      return 504;
    case ApiErrorKind::kInsufficientStorage:
      return 507;
    case ApiErrorKind::kInternal:
      return 500;
  }
  return 500;
}

int client_errors_400_http_status(ApiErrorKind kind) {
  switch (kind) {
    case ApiErrorKind::kValidation:
    case ApiErrorKind::kInvalidInput:
    case ApiErrorKind::kTokenizer:
    case ApiErrorKind::kTooManyInputs:
      return 400;
    default:
      return default_http_status(kind);
  }
}

ApiErrorKind kind_for_status(int status) {
  switch (status) {
    case 401:
      return ApiErrorKind::kUnauthorized;
    case 404:
      return ApiErrorKind::kNotFound;
    case 405:
      return ApiErrorKind::kMethodNotAllowed;
    case 413:
      return ApiErrorKind::kPayloadTooLarge;
    case 415:
      return ApiErrorKind::kUnsupportedMedia;
    case 429:
      return ApiErrorKind::kOverloaded;
    case 431:
      return ApiErrorKind::kHeaderTooLarge;
    case 503:
      return ApiErrorKind::kUnavailable;
    case 504:
      return ApiErrorKind::kDeadlineExceeded;
    case 500:
      return ApiErrorKind::kInternal;
    default:
      return ApiErrorKind::kBadRequest;
  }
}

std::string plain_error_body(const ApiError& error, int /*status*/) {
  JsonWriter json;
  json.begin_object().key("error").value(std::string_view(error.what())).end_object();
  return json.take();
}

http::Response error_response(const DialectSpec& dialect, const ApiError& error) {
  http::Response response;
  response.status = dialect.http_status(error.kind());
  response.body = dialect.error_body(error, response.status);
  switch (error.kind()) {
    case ApiErrorKind::kOverloaded:
      response.headers.push_back({"Retry-After", "1"});
      break;
    case ApiErrorKind::kUnauthorized:
      response.headers.push_back({"WWW-Authenticate", "Bearer"});
      break;
    default:
      break;
  }
  return response;
}

}  // namespace onepass::api
