#include "api/common/generic_dialect.h"

#include "api/common/call.h"

namespace onepass::api {

namespace {

void handle_metrics(Call& call) {
  http::Response response;
  response.content_type = "text/plain; version=0.0.4; charset=utf-8";
  response.body = call.service.render_metrics();
  call.reply.send(std::move(response));
}

constexpr Route kRoutes[] = {
    {"GET", "/metrics", handle_metrics, kRouteOpen | kRouteLiveness},
};

}  // namespace

constinit const DialectSpec kGenericDialect{"generic", default_http_status, plain_error_body,
                                            kRoutes};

}  // namespace onepass::api
