// Cohere's rerank API, v1 and v2, which Jina's and vLLM's /v1/rerank follow too, and its embed
// API: the routes RAG frameworks (LangChain, LlamaIndex, the cohere-ai SDKs) call to rerank
// retrieved passages and embed them.
#pragma once

#include "api/common/call.h"
#include "api/common/dialect.h"
#include "api/common/json_request.h"

namespace onepass::api::cohere {

// Its routes, statuses and error body (dialect.cpp).
extern const DialectSpec kDialect;

// The model a Cohere body's "model" names (or the only one), the reply told its name; ApiError
// when the body is not an object or the model is not served.
runtime::ModelDescription select_cohere_model(Call& call, const Json& body);

void handle_rerank_v1(Call& call);
void handle_rerank_v2(Call& call);
void handle_embed_v1(Call& call);  // embed.cpp: an embedder's vectors, Cohere's shapes
void handle_embed_v2(Call& call);

}  // namespace onepass::api::cohere
