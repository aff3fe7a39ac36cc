// The readiness probe that SageMaker's GET /ping and TEI's GET /health share: 200 with an empty
// body when every model is ready, else TEI's 503 "unhealthy" body (also what the router answers
// on these routes while draining, kRouteReadiness).
#pragma once

#include "api/common/call.h"

namespace onepass::api {

void handle_health(Call& call);
void answer_unhealthy(Reply& reply);

}  // namespace onepass::api
