// What a sentence-transformers model folder says beside config.json: the pooling
// (1_Pooling/config.json), the longest input it was trained for (sentence_bert_config.json, or
// one of its older names), its prompts (config_sentence_transformers.json), the modules its
// pipeline runs after pooling (modules.json: Dense modules, then whether it normalises). TEI and
// the sentence-transformers library both read these; docs/api.md "Embedding models" says which
// parts onepass honours and how.
#pragma once

#include <cstddef>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "model/heads/dense_module.h"
#include "runtime/service.h"

namespace onepass::runtime {

struct SentenceTransformersConfig {
  std::optional<Pooling> pooling;                  // 1_Pooling/config.json: cls or mean
  bool pooling_includes_prompt = true;             // 1_Pooling's include_prompt
  std::size_t max_seq_length = 0;                  // 0: no sentence_*_config.json, or it gives none
  std::map<std::string, std::string> prompts;      // name -> text put before the input
  std::optional<std::string> default_prompt_name;  // the library's default when none is named
  bool normalizes = false;  // modules.json ends in a Normalize module: encode() gives unit vectors
  // modules.json's Dense modules, in pipeline order (each folder's config.json); they map the
  // pooled embedding onto the next one's width.
  std::vector<model::heads::DenseModuleConfig> dense;
  // Module types of modules.json that change a sentence embedding and that onepass does not run
  // (LSTM, CNN, WeightedLayerPooling, Router, ...); an embedder with one is refused.
  std::vector<std::string> unsupported_modules;
};

// Reads the files that exist (none is required). Throws onepass::Error kInvalidModel for a
// file that is not a JSON object or holds a field of the wrong type (a module path that leaves
// the folder included), kUnsupported for a pooling other than cls or mean or a Dense activation
// other than tanh or identity; messages name the file, never the folder's full path.
SentenceTransformersConfig read_sentence_transformers_config(const std::filesystem::path& dir);

}  // namespace onepass::runtime
