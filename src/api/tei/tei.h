// Hugging Face Text Embeddings Inference routes, field for field, plus /zero_shot.
#pragma once

#include "api/common/call.h"
#include "api/common/dialect.h"

namespace onepass::api::tei {

// Its routes, statuses and error body (dialect.cpp).
extern const DialectSpec kDialect;

void handle_predict(Call& call);
void handle_predict_tokens(Call& call);
void handle_rerank(Call& call);
void handle_embed(Call& call);
void handle_embed_all(Call& call);
void handle_embed_sparse(Call& call);
void handle_similarity(Call& call);
void handle_tokenize(Call& call);
void handle_decode(Call& call);
void handle_zero_shot(Call& call);
void handle_info(Call& call);

}  // namespace onepass::api::tei
