// The KServe v2 (Open Inference Protocol) dialect: its routes, statuses (every client error is
// 400) and error body {"error": message}.
#include "api/kserve_v2/kserve.h"

namespace onepass::api::kserve_v2 {

namespace {

int http_status(ApiErrorKind kind) {
  return kind == ApiErrorKind::kValidation ? 400 : default_http_status(kind);
}

constexpr Route kRoutes[] = {
    {"GET", "/v2/health/live", handle_live, kRouteOpen | kRouteLiveness},
    {"GET", "/v2/health/ready", handle_ready, kRouteOpen},
    {"GET", "/v2", handle_server_metadata},
    {"GET", "/v2/models/{model}", handle_model_metadata},
    {"GET", "/v2/models/{model}/ready", handle_model_ready},
    {"POST", "/v2/models/{model}/infer", handle_infer},
};

}  // namespace

constinit const DialectSpec kDialect{"kserve_v2", http_status, plain_error_body, kRoutes};

}  // namespace onepass::api::kserve_v2
