// OpenAI embeddings: POST /v1/embeddings, float and base64 encodings.
#pragma once

#include "api/common/call.h"
#include "api/common/dialect.h"

namespace onepass::api::openai {

// Its route, statuses and error body (dialect.cpp).
extern const DialectSpec kDialect;

void handle_embeddings(Call& call);

}  // namespace onepass::api::openai
