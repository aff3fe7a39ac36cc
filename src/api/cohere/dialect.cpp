// The Cohere / Jina rerank and Cohere embed dialect: its routes, statuses (every problem with the
// request is 400, Cohere's "invalid request"), error body {"message"} and the model a body names.
#include "api/cohere/cohere.h"
#include "api/common/api_error.h"
#include "api/common/json_writer.h"
#include "api/common/model_select.h"

namespace onepass::api::cohere {

namespace {

// Cohere's error body; the cohere-ai SDK hands it to the caller as the error's body.
std::string error_body(const ApiError& error, int /*status*/) {
  JsonWriter json;
  json.begin_object().key("message").value(std::string_view(error.what())).end_object();
  return json.take();
}

constexpr Route kRoutes[] = {
    {"POST", "/v1/rerank", handle_rerank_v1},
    {"POST", "/v2/rerank", handle_rerank_v2},
    {"POST", "/v1/embed", handle_embed_v1},
    {"POST", "/v2/embed", handle_embed_v2},
};

}  // namespace

runtime::ModelDescription select_cohere_model(Call& call, const Json& body) {
  if (!body.is_object())
    throw ApiError(ApiErrorKind::kValidation, "the body must be a JSON object");
  auto model = select_model_from_body(call.service, get_string(body, "model").value_or(""));
  call.reply.set_model(model.name);
  return model;
}

constinit const DialectSpec kDialect{"cohere", client_errors_400_http_status, error_body, kRoutes};

}  // namespace onepass::api::cohere
