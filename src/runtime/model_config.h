// What a model folder serves, read from its config.json (and 1_Pooling/config.json) before the
// weights are loaded, so that a lazily loaded model can still be described and routed
// (docs/api.md "Choosing the model").
#pragma once

#include <filesystem>
#include <optional>
#include <string>

#include "runtime/service.h"

namespace onepass::runtime {

// Reads `dir`/config.json (model::read_model_config, model::describe_checkpoint: the loader's
// own parse) into a ModelDescription (state kUnloaded): the architecture, labels, task,
// entailment/contradiction indices, pooling (override, else 1_Pooling/config.json, else
// mean) and max_input_length = min(model's position limit, `max_input_length` when nonzero).
// Throws onepass::Error (kNotFound without config.json, kInvalidModel for a broken one,
// kUnsupported for an architecture outside the loader's table);
// messages never carry the folder's full path.
ModelDescription describe_model_folder(const std::string& name, const std::filesystem::path& dir,
                                       std::size_t max_input_length,
                                       std::optional<Pooling> pooling_override);

// Fills what follows from description.info: task, entailment/contradiction indices and
// max_input_length = min(info.max_tokens, `max_input_length` when nonzero). The same before
// load (describe_model_folder) and after it (the registry, from the loaded encoder's info).
void derive_description(ModelDescription& description, std::size_t max_input_length);

// "classifier", "reranker", "embedder", "token-classification" (the pipeline's name, as HF_TASK
// says it), "sparse-embedding" (SPLADE; no pipeline has a name for it) for logs and
// `onepass info`.
const char* task_name(ModelTask task);
// "cls", "mean".
const char* pooling_name(Pooling pooling);

// The task a loaded checkpoint serves, from its ModelInfo.
ModelTask task_of(const model::ModelInfo& info);

// Index of the first label whose name starts with `prefix` (case-insensitive); -1 if none.
int find_label(const model::ModelInfo& info, std::string_view prefix);

}  // namespace onepass::runtime
