// The SageMaker / Hugging Face inference toolkit dialect and the Hugging Face Inference API
// dialect: their routes, statuses and error bodies. Both answer every client error with 400.
#include "api/common/health.h"
#include "api/common/json_writer.h"
#include "api/sagemaker/sagemaker.h"

namespace onepass::api::sagemaker {

namespace {

int toolkit_http_status(ApiErrorKind kind) {
  return kind == ApiErrorKind::kValidation ? 400 : default_http_status(kind);
}

std::string toolkit_error_body(const ApiError& error, int status) {
  JsonWriter json;
  json.begin_object()
      .key("code")
      .value(status)
      .key("type")
      .value("InternalServerException")
      .key("message")
      .value(std::string_view(error.what()))
      .end_object();
  return json.take();
}

constexpr Route kToolkitRoutes[] = {
    {"GET", "/ping", handle_health, kRouteOpen | kRouteReadiness},
    {"POST", "/invocations", handle_invocations},
    {"GET", "/models", handle_list_models, kRouteManagement},
    {"POST", "/models", handle_load_model, kRouteManagement},
    {"GET", "/models/{model}", handle_describe_model, kRouteManagement},
    {"DELETE", "/models/{model}", handle_unload_model, kRouteManagement},
    {"POST", "/models/{model}/invoke", handle_invocations},
};

constexpr Route kInferenceApiRoutes[] = {
    {"POST", "/", handle_inference_api},
    // The Inference API per model: what POST / answers, for the model the path names.
    {"POST", "/models/{model}", handle_inference_api},
};

}  // namespace

constinit const DialectSpec kDialect{"sagemaker", toolkit_http_status, toolkit_error_body,
                                     kToolkitRoutes};

constinit const DialectSpec kInferenceApiDialect{"inference_api", toolkit_http_status,
                                                 plain_error_body, kInferenceApiRoutes};

}  // namespace onepass::api::sagemaker
