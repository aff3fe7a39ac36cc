// OpenAI embeddings: POST /v1/embeddings, float and base64 encodings.
#pragma once

#include "api/common/call.h"

namespace onepass::api::openai {

void handle_embeddings(Call& call);

}  // namespace onepass::api::openai
