// vLLM's pooling routes for encoder models, field for field as vLLM's OpenAI-compatible server
// defines them (entrypoints/pooling/{classify,score}/protocol.py): what vLLM users already send.
#pragma once

#include "api/common/call.h"
#include "api/common/dialect.h"

namespace onepass::api::vllm {

// Its routes, statuses and error body (dialect.cpp).
extern const DialectSpec kDialect;

void handle_classify(Call& call);  // POST /classify
void handle_score(Call& call);     // POST /score, POST /v1/score

}  // namespace onepass::api::vllm
