// Overflow windows as the tokenizers library cuts them (truncation with a stride): which tokens
// each window takes. Pure functions on counts and encodings, without the engine, so that the
// runtime's long-input windows and the dialects' pipeline windows (token classification's
// stride, question answering's doc_stride) cut alike.
#pragma once

#include <cstddef>
#include <utility>
#include <vector>

#include "tokenizer/tokenizer.h"

namespace onepass::runtime {

// [begin, end) token spans over a text of `length` tokens: the first starts at 0, each next one
// `room - stride` tokens later, and the last is the first that reaches `length`.
// Needs stride < room.
std::vector<std::pair<std::size_t, std::size_t>> window_spans(std::size_t length, std::size_t room,
                                                              std::size_t stride);

// Special tokens at the start and at the end of `full` (its special_tokens_mask).
std::size_t leading_special_tokens(const tokenizer::Encoding& full);
std::size_t trailing_special_tokens(const tokenizer::Encoding& full);

}  // namespace onepass::runtime
