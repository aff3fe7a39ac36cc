// KServe Open Inference Protocol v2 (REST): metadata, health and infer with text or tensors.
#pragma once

#include "api/common/call.h"
#include "api/common/dialect.h"

namespace onepass::api::kserve_v2 {

// Its routes, statuses and error body (dialect.cpp).
extern const DialectSpec kDialect;

void handle_server_metadata(Call& call);  // GET /v2
void handle_model_metadata(Call& call);   // GET /v2/models/{model}
void handle_model_ready(Call& call);      // GET /v2/models/{model}/ready
void handle_live(Call& call);             // GET /v2/health/live
void handle_ready(Call& call);            // GET /v2/health/ready
void handle_infer(Call& call);            // POST /v2/models/{model}/infer

}  // namespace onepass::api::kserve_v2
