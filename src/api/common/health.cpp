#include "api/common/health.h"

namespace onepass::api {

void handle_health(Call& call) {
  if (call.service.ready()) {
    http::Response response;
    response.content_type.clear();
    call.reply.send(std::move(response));
    return;
  }
  answer_unhealthy(call.reply);
}

void answer_unhealthy(Reply& reply) {
  reply.json(R"({"error":"unhealthy","error_type":"Unhealthy"})", 503);
}

}  // namespace onepass::api
