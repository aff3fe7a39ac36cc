// The fake models' tokenizer: one token per space-separated word, so that a test or a fuzz
// input controls its token count by its spaces. [CLS] is id 1, [SEP] id 2, a word
// 100 + (its byte length mod 800); ids below 3 are special.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "runtime/service.h"
#include "tokenizer/tokenizer.h"

namespace onepass::api::fuzzing {

// [CLS] A [SEP] (B [SEP]) when `add_special_tokens`, B's type id 1; offsets in code points of
// each text, as the real tokenizers give them; word ids count each text's words from 0.
tokenizer::Encoding fake_encode(std::string_view text, std::optional<std::string_view> pair,
                                bool add_special_tokens);

// The ids as decimal numbers joined by spaces, the specials left out on request. Throws
// Error(kInvalidInput) for an id outside [0, vocab_size).
std::string fake_decode(std::span<const std::int32_t> ids, int vocab_size,
                        bool skip_special_tokens);

// An item's tokens with its special tokens, counted from its spaces (as fake_encode would give
// them for single-spaced words) or its ids.
int fake_token_count(const runtime::InferenceItem& item);

// A text's own tokens, special tokens left out.
int fake_text_tokens(std::string_view text);

}  // namespace onepass::api::fuzzing
