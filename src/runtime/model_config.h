// What a model folder serves, read from its config.json (and 1_Pooling/config.json) before the
// weights are loaded, so that a lazily loaded model can still be described and routed
// (docs/api.md "Choosing the model").
#pragma once

#include <filesystem>
#include <optional>
#include <string>

#include "runtime/service.h"

namespace onepass::runtime {

// What the server's flags add to a folder's own description.
struct FolderOptions {
  std::size_t max_input_length = 0;  // tokens; 0: the model's own limits only
  std::optional<Pooling> pooling;    // embedders: overrides 1_Pooling/config.json
  // Embedders: the prompt before a text whose request names none, by name (one of the
  // folder's prompts) or as text; at most one of the two. Overrides the config's default.
  std::optional<std::string> default_prompt_name;
  std::optional<std::string> default_prompt;
};

// Reads `dir`/config.json (model::read_model_config, model::describe_checkpoint: the loader's
// own parse) and sentence-transformers' files (sentence_transformers.h) into a
// ModelDescription (state kUnloaded): the architecture, labels, task, entailment/contradiction
// indices, pooling (override, else 1_Pooling/config.json, else mean), prompts and the default
// one, and max_input_length (derive_description). Throws onepass::Error (kNotFound without
// config.json, kInvalidModel for a broken file, kUnsupported for an architecture outside the
// loader's table, kInvalidArgument for a --default-prompt-name the folder has no prompt for);
// messages never carry the folder's full path.
ModelDescription describe_model_folder(const std::string& name, const std::filesystem::path& dir,
                                       const FolderOptions& options = {});

// Fills what follows from description.info: task, entailment/contradiction indices and
// max_input_length = min(info.max_tokens, description.max_seq_length when nonzero,
// `max_input_length` when nonzero). The same before load (describe_model_folder) and after it
// (the registry, from the loaded encoder's info).
void derive_description(ModelDescription& description, std::size_t max_input_length);

using model::heads::pooling_name;  // "cls", "mean" (postprocess.h)

// The task a loaded checkpoint serves, from its ModelInfo.
ModelTask task_of(const model::ModelInfo& info);

// Index of the first label whose name starts with `prefix` (case-insensitive); -1 if none.
int find_label(const model::ModelInfo& info, std::string_view prefix);

}  // namespace onepass::runtime
