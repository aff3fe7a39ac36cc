// tokenizer.json post-processors: add the special tokens around one text or a pair, set type
// ids, and (ByteLevel, RobertaProcessing) trim the spaces out of byte-level token offsets.
#pragma once

#include <memory>
#include <vector>

#include "tokenizer/hf_json/json_util.h"
#include "tokenizer/tokenizer.h"

namespace onepass::tokenizer::hf_json {

class PostProcessor {
 public:
  virtual ~PostProcessor() = default;
  // Ids added for one text (pair = false) or a pair.
  virtual std::size_t added_tokens(bool pair) const = 0;
  // Rewrites the per-sequence encodings (one or two); the caller concatenates what comes out
  // (the crate's process_encodings followed by Encoding::merge, offsets not shifted).
  virtual void process(std::vector<Encoding>& encodings, bool add_special_tokens) const = 0;
};

// TemplateProcessing, BertProcessing, RobertaProcessing, ByteLevel, Sequence; any other type is
// Error(kUnsupported) naming it.
std::unique_ptr<PostProcessor> make_post_processor(const Json& j);

// Concatenates encodings in order.
Encoding merge_encodings(std::vector<Encoding>& encodings);

}  // namespace onepass::tokenizer::hf_json
