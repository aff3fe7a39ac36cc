// The one place where errors become HTTP statuses and dialect error bodies.
#include "api/common/api_error.h"

#include <nlohmann/json.hpp>

#include "api/common/json_writer.h"
#include "base/error.h"

namespace onepass::api {

ApiError to_api_error(std::exception_ptr error) {
  try {
    std::rethrow_exception(error);
  } catch (const ApiError& e) {
    return e;
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

int http_status(Dialect dialect, ApiErrorKind kind) {
  // Cohere and vLLM answer every problem with the request itself with 400 (vLLM's
  // BadRequestError, Cohere's "invalid request").
  const bool client_400 = dialect == Dialect::kCohere || dialect == Dialect::kVllm;
  switch (kind) {
    case ApiErrorKind::kBadRequest:
      return 400;
    case ApiErrorKind::kUnsupportedMedia:
      return 415;
    case ApiErrorKind::kValidation:
      // The toolkit answers every client error with 400, and so does KServe.
      return dialect == Dialect::kSageMaker || dialect == Dialect::kInferenceApi ||
                     dialect == Dialect::kKserve || client_400
                 ? 400
                 : 422;
    case ApiErrorKind::kEmpty:
      return 400;
    case ApiErrorKind::kInvalidInput:
    case ApiErrorKind::kTokenizer:
    case ApiErrorKind::kTooManyInputs:
      return client_400 ? 400 : 422;
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
    case ApiErrorKind::kInsufficientStorage:
      return 507;
    case ApiErrorKind::kInternal:
      return 500;
  }
  return 500;
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
    case 500:
      return ApiErrorKind::kInternal;
    default:
      return ApiErrorKind::kBadRequest;
  }
}

namespace {

// TEI's error_type values.
const char* tei_error_type(ApiErrorKind kind) {
  switch (kind) {
    case ApiErrorKind::kEmpty:
      return "Empty";
    case ApiErrorKind::kTokenizer:
      return "Tokenizer";
    case ApiErrorKind::kOverloaded:
      return "Overloaded";
    case ApiErrorKind::kUnavailable:
      return "Unhealthy";
    case ApiErrorKind::kBackend:
    case ApiErrorKind::kInternal:
    case ApiErrorKind::kInsufficientStorage:
      return "Backend";
    default:
      return "Validation";
  }
}

void openai_type_and_code(ApiErrorKind kind, const char*& type, const char*& code) {
  type = "invalid_request_error";
  code = nullptr;
  switch (kind) {
    case ApiErrorKind::kUnauthorized:
      code = "invalid_api_key";
      break;
    case ApiErrorKind::kNotFound:
      code = "model_not_found";
      break;
    case ApiErrorKind::kOverloaded:
      type = "rate_limit_error";
      code = "rate_limit_exceeded";
      break;
    case ApiErrorKind::kUnavailable:
    case ApiErrorKind::kBackend:
    case ApiErrorKind::kInternal:
    case ApiErrorKind::kInsufficientStorage:
      type = "server_error";
      break;
    default:
      break;
  }
}

// vLLM's ErrorInfo.type: the exception class name its handlers report for the status.
const char* vllm_error_type(int status) {
  switch (status) {
    case 400:
      return "BadRequestError";
    case 401:
      return "UnauthorizedError";
    case 404:
      return "NotFoundError";
    case 405:
      return "MethodNotAllowedError";
    case 413:
      return "PayloadTooLargeError";
    case 415:
      return "UnsupportedMediaTypeError";
    case 429:
      return "TooManyRequestsError";
    case 431:
      return "RequestHeaderFieldsTooLargeError";
    case 503:
      return "ServiceUnavailableError";
    default:
      return status >= 500 || status == 424 ? "InternalServerError" : "BadRequestError";
  }
}

}  // namespace

http::Response error_response(Dialect dialect, const ApiError& error) {
  http::Response response;
  response.status = http_status(dialect, error.kind());
  const std::string_view message = error.what();
  JsonWriter json;
  switch (dialect) {
    case Dialect::kSageMaker:
      json.begin_object()
          .key("code")
          .value(response.status)
          .key("type")
          .value("InternalServerException")
          .key("message")
          .value(message)
          .end_object();
      break;
    case Dialect::kTei:
      json.begin_object()
          .key("error")
          .value(message)
          .key("error_type")
          .value(tei_error_type(error.kind()))
          .end_object();
      break;
    case Dialect::kOpenai: {
      const char* type = nullptr;
      const char* code = nullptr;
      openai_type_and_code(error.kind(), type, code);
      json.begin_object().key("error").begin_object();
      json.key("message").value(message).key("type").value(type).key("param");
      if (error.param().empty())
        json.null();
      else
        json.value(error.param());
      json.key("code");
      if (code)
        json.value(code);
      else
        json.null();
      json.end_object().end_object();
      break;
    }
    case Dialect::kCohere:
      // Cohere's error body; the cohere-ai SDK hands it to the caller as the error's body.
      json.begin_object().key("message").value(message).end_object();
      break;
    case Dialect::kVllm:
      json.begin_object().key("error").begin_object();
      json.key("message").value(message).key("type").value(vllm_error_type(response.status));
      json.key("param");
      if (error.param().empty())
        json.null();
      else
        json.value(error.param());
      json.key("code").value(response.status).end_object().end_object();
      break;
    case Dialect::kGeneric:
    case Dialect::kInferenceApi:
    case Dialect::kKserve:
      json.begin_object().key("error").value(message).end_object();
      break;
  }
  response.body = json.take();
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
