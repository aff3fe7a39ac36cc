// The Text Embeddings Inference dialect: its routes, statuses and error body
// {"error", "error_type"}.
#include "api/common/health.h"
#include "api/common/json_writer.h"
#include "api/tei/tei.h"

namespace onepass::api::tei {

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

std::string error_body(const ApiError& error, int /*status*/) {
  JsonWriter json;
  json.begin_object()
      .key("error")
      .value(std::string_view(error.what()))
      .key("error_type")
      .value(tei_error_type(error.kind()))
      .end_object();
  return json.take();
}

constexpr Route kRoutes[] = {
    {"GET", "/health", handle_health, kRouteOpen | kRouteReadiness},
    {"POST", "/predict", handle_predict},
    {"POST", "/predict_tokens", handle_predict_tokens},
    {"POST", "/rerank", handle_rerank},
    {"POST", "/embed", handle_embed},
    {"POST", "/embed_all", handle_embed_all},
    {"POST", "/embed_sparse", handle_embed_sparse},
    {"POST", "/similarity", handle_similarity},
    {"POST", "/tokenize", handle_tokenize},
    {"POST", "/decode", handle_decode},
    {"POST", "/zero_shot", handle_zero_shot},
    {"GET", "/info", handle_info},
};

}  // namespace

constinit const DialectSpec kDialect{"tei", default_http_status, error_body, kRoutes};

}  // namespace onepass::api::tei
