// The one place a request's outputs get their last, request-chosen steps: a pooled embedding's
// `dimensions` and normalisation, a score's activation (service.h: EmbeddingOptions,
// score_activation). The runtime runs it once a request's sequences are gathered (and a
// chunked input's windows combined); the dialects never redo it. In onepass_runtime_service,
// so the API fuzz targets' fake service finishes its outputs the same way.
#pragma once

#include <vector>

#include "runtime/service.h"

namespace onepass::runtime {

void finish_outputs(const InferenceRequest& request, std::vector<ItemOutput>& items);

}  // namespace onepass::runtime
