// The OpenAI dialect: its route, statuses and error body
// {"error": {"message", "type", "param", "code"}}.
#include "api/common/json_writer.h"
#include "api/openai/openai.h"

namespace onepass::api::openai {

namespace {

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

std::string error_body(const ApiError& error, int /*status*/) {
  const char* type = nullptr;
  const char* code = nullptr;
  openai_type_and_code(error.kind(), type, code);
  JsonWriter json;
  json.begin_object().key("error").begin_object();
  json.key("message").value(std::string_view(error.what())).key("type").value(type).key("param");
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
  return json.take();
}

constexpr Route kRoutes[] = {
    {"POST", "/v1/embeddings", handle_embeddings},
};

}  // namespace

constinit const DialectSpec kDialect{"openai", default_http_status, error_body, kRoutes};

}  // namespace onepass::api::openai
