// What a sentence-transformers model folder says beside config.json: the pooling
// (1_Pooling/config.json), the longest input it was trained for (sentence_bert_config.json, or
// one of its older names), its prompts (config_sentence_transformers.json) and whether its
// embeddings are normalised (modules.json). TEI and the
// sentence-transformers library both read these; docs/api.md "Embedding models" says which
// parts onepass honours and how.
#pragma once

#include <cstddef>
#include <filesystem>
#include <map>
#include <optional>
#include <string>

#include "runtime/service.h"

namespace onepass::runtime {

struct SentenceTransformersConfig {
  std::optional<Pooling> pooling;                  // 1_Pooling/config.json: cls or mean
  bool pooling_includes_prompt = true;             // 1_Pooling's include_prompt
  std::size_t max_seq_length = 0;                  // 0: no sentence_*_config.json, or it gives none
  std::map<std::string, std::string> prompts;      // name -> text put before the input
  std::optional<std::string> default_prompt_name;  // the library's default when none is named
  bool normalizes = false;  // modules.json ends in a Normalize module: encode() gives unit vectors
};

// Reads the files that exist (none is required). Throws onepass::Error kInvalidModel for a
// file that is not a JSON object or holds a field of the wrong type, kUnsupported for a pooling
// other than cls or mean; messages name the file, never the folder's full path.
SentenceTransformersConfig read_sentence_transformers_config(const std::filesystem::path& dir);

}  // namespace onepass::runtime
