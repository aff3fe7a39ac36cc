// tokenizer.json normalizers: each rewrites a NormalizedString in place, keeping alignments.
#pragma once

#include <memory>

#include "tokenizer/hf_json/json_util.h"
#include "tokenizer/hf_json/normalized_string.h"

namespace onepass::tokenizer::hf_json {

class Normalizer {
 public:
  virtual ~Normalizer() = default;
  virtual void normalize(NormalizedString& s) const = 0;
};

// Builds the normalizer a tokenizer.json "normalizer" object describes (BertNormalizer,
// NFC/NFD/NFKC/NFKD, Lowercase, StripAccents, Strip, Replace, Prepend, Precompiled, Sequence);
// any other type is Error(kUnsupported) naming it.
std::unique_ptr<Normalizer> make_normalizer(const Json& j);

// The SentencePiece precompiled_charsmap normalizer (precompiled.cpp).
std::unique_ptr<Normalizer> make_precompiled(const Json& j);

}  // namespace onepass::tokenizer::hf_json
