// The vLLM pooling dialect: its routes, statuses (every problem with the request is 400, vLLM's
// BadRequestError) and error body {"error": {"message", "type", "param", "code"}}.
#include "api/common/json_writer.h"
#include "api/vllm/vllm.h"

namespace onepass::api::vllm {

namespace {

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

std::string error_body(const ApiError& error, int status) {
  JsonWriter json;
  json.begin_object().key("error").begin_object();
  json.key("message")
      .value(std::string_view(error.what()))
      .key("type")
      .value(vllm_error_type(status));
  json.key("param");
  if (error.param().empty())
    json.null();
  else
    json.value(error.param());
  json.key("code").value(status).end_object().end_object();
  return json.take();
}

constexpr Route kRoutes[] = {
    {"POST", "/classify", handle_classify},
    {"POST", "/score", handle_score},
    {"POST", "/v1/score", handle_score},
};

}  // namespace

constinit const DialectSpec kDialect{"vllm", client_errors_400_http_status, error_body, kRoutes};

}  // namespace onepass::api::vllm
