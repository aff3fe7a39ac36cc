// Long inputs split into windows (LongInput::kChunk, docs/api.md "Long inputs"): which tokens
// each window holds, and how the windows' outputs are combined into the input's answer.
//
// The windows are those of Hugging Face tokenizers' `truncation="only_first"` with
// `return_overflowing_tokens=True` and `stride`: every window holds the special tokens, a run
// of at most `room` tokens of the first text and the whole second text of a pair; consecutive
// runs share `stride` tokens; the last run ends with the text (it may be shorter).
#pragma once

#include <cstddef>
#include <optional>
#include <utility>
#include <vector>

#include "runtime/prepare.h"
#include "runtime/service.h"
#include "tokenizer/tokenizer.h"

namespace onepass::runtime {

// The overlap when the request names none: an eighth of a window's room for the first text,
// enough context on either side of a cut for a sentence or two without running every token
// twice.
std::size_t default_stride(std::size_t room);

// [begin, end) token spans over a first text of `length` tokens: the first starts at 0, each
// next one `room - stride` tokens later, and the last is the first that reaches `length`.
// Needs stride < room.
std::vector<std::pair<std::size_t, std::size_t>> window_spans(std::size_t length, std::size_t room,
                                                              std::size_t stride);

// Cuts `full` (an encoding with special tokens, longer than `limit`) into windows of at most
// `limit` tokens. `first_tokens` is how many tokens the first text has; they follow the
// leading special tokens. Type ids are kept when `keep_type_ids`. Throws
// onepass::Error(kInvalidInput) when the special tokens and the second text leave no room for
// the first text, or when `stride` is not smaller than that room.
std::vector<PreparedItem> split_into_windows(const tokenizer::Encoding& full,
                                             std::size_t first_tokens, std::size_t limit,
                                             std::optional<std::size_t> stride, bool keep_type_ids);

// Fills `out.values` and `out.num_tokens` from `out.windows`: the mean of the windows' values
// weighted by each window's token count (special tokens included). For logits this lets every
// token the model read count once per window it was read in, so a short last window weighs
// less; for mean-pooled embeddings it equals the mean over all the windows' tokens.
void combine_windows(ItemOutput& out);

}  // namespace onepass::runtime
