// The GLiNER dialect: POST /extract. Statuses and error bodies are the generic ones (422 for a
// bad field, {"error": message}).
#include "api/common/extract.h"
#include "api/common/model_select.h"
#include "api/common/task_guard.h"
#include "api/gliner/gliner.h"

namespace onepass::api::gliner {

void handle_extract(Call& call) {
  const Json body = parse_json_body(call.request);
  std::string name;
  if (body.is_object()) {
    if (const Json* model = get_field(body, "model"); model != nullptr && model->is_string())
      name = model->get<std::string>();
  }
  const auto model = select_model_from_body(call.service, name);
  require_task(model, runtime::bits_of({runtime::ModelTask::kSpanExtractor}), "/extract", "model");
  reply_extract(call, model, parse_extract_request(body, nullptr, model, call.options));
}

namespace {

constexpr Route kRoutes[] = {
    {"POST", "/extract", handle_extract},
};

}  // namespace

constinit const DialectSpec kDialect{"gliner", default_http_status, plain_error_body, kRoutes};

}  // namespace onepass::api::gliner
