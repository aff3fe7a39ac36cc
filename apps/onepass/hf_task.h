// HF_TASK, the Hugging Face inference toolkit's pipeline task, checked against what a model
// folder serves: a container configured for "zero-shot-classification" must not quietly serve
// an embedder. The toolkit's task names are accepted; a task onepass has no pipeline for is
// refused by name.
#pragma once

#include <string_view>

#include "runtime/service.h"

namespace onepass::app {

// Throws onepass::Error (kInvalidArgument: exit 2) naming the task and the model's own task
// when they differ, or when onepass serves no such task.
void check_hf_task(std::string_view hf_task, const runtime::ModelDescription& model);

}  // namespace onepass::app
