// tokenizer.json pre-tokenizers: they cut the normalized text into splits that the model then
// tokenizes one by one. Splits that already hold tokens (added tokens) are left alone.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "tokenizer/hf_json/json_util.h"
#include "tokenizer/hf_json/normalized_string.h"

namespace onepass::tokenizer::hf_json {

// A model token: offsets in code points of the split's normalized text.
struct Token {
  std::int32_t id = 0;
  std::string value;
  std::uint32_t start = 0;
  std::uint32_t end = 0;
};

struct Split {
  NormalizedString normalized;
  std::optional<std::vector<Token>> tokens;  // set for added tokens and after the model ran
};

// Replaces every split that has no tokens yet by the pieces `fn` returns; empty pieces are
// dropped (the crate's PreTokenizedString::split).
void split_each(std::vector<Split>& splits,
                const std::function<std::vector<NormalizedString>(const NormalizedString&)>& fn);

class PreTokenizer {
 public:
  virtual ~PreTokenizer() = default;
  virtual void pre_tokenize(std::vector<Split>& splits) const = 0;
};

// BertPreTokenizer, Whitespace, WhitespaceSplit, Metaspace, ByteLevel, Punctuation, Split,
// Digits, Sequence; any other type is Error(kUnsupported) naming it.
std::unique_ptr<PreTokenizer> make_pre_tokenizer(const Json& j);

// ByteLevel (byte_level.cpp).
std::unique_ptr<PreTokenizer> make_byte_level_pre_tokenizer(const Json& j);
// The printable stand-in of every byte (GPT-2's bytes_to_unicode).
char32_t byte_to_char(std::uint8_t b);

SplitBehavior parse_split_behavior(const Json& j, std::string_view where, SplitBehavior fallback);

}  // namespace onepass::tokenizer::hf_json
