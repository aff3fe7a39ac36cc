// SageMaker container contract with the Hugging Face inference toolkit payloads, the Hugging
// Face Inference API shape on POST /, and the SageMaker multi-model (MME) routes.
#pragma once

#include "api/common/call.h"
#include "api/common/dialect.h"

namespace onepass::api::sagemaker {

// The toolkit's and the Inference API's routes, statuses and error bodies (dialect.cpp).
extern const DialectSpec kDialect;
extern const DialectSpec kInferenceApiDialect;

void handle_invocations(Call& call);    // POST /invocations, POST /models/{model}/invoke
void handle_inference_api(Call& call);  // POST /, POST /models/{model}

void handle_list_models(Call& call);     // GET /models
void handle_load_model(Call& call);      // POST /models
void handle_describe_model(Call& call);  // GET /models/{model}
void handle_unload_model(Call& call);    // DELETE /models/{model}

}  // namespace onepass::api::sagemaker
