// Long inputs split into windows (LongInput::kChunk, docs/api.md "Long inputs"): which tokens
// each window holds, and how the windows' outputs are combined into the input's answer.
//
// The windows are those of Hugging Face tokenizers' `truncation="only_first"` with
// `return_overflowing_tokens=True` and `stride`: every window holds the special tokens, a run
// of at most `room` tokens of the first text and the whole second text of a pair; consecutive
// runs share `stride` tokens; the last run ends with the text (it may be shorter). A reranker's
// pair splits its second text (the document) the same way (`only_second`), the query whole in
// every window.
#pragma once

#include <cstddef>
#include <optional>
#include <utility>
#include <vector>

#include "runtime/prepare.h"
#include "runtime/service.h"
#include "runtime/window_spans.h"
#include "tokenizer/tokenizer.h"

namespace onepass::runtime {

// The overlap when the request names none: an eighth of a window's room for the first text,
// enough context on either side of a cut for a sentence or two without running every token
// twice.
std::size_t default_stride(std::size_t room);

// The tokens of the text a window splits: `count` tokens from `begin` in the full encoding.
struct SplitText {
  std::size_t begin = 0;
  std::size_t count = 0;
};

// Cuts `full` (an encoding with special tokens, longer than `limit`) into windows of at most
// `limit` tokens: each keeps everything outside `text` and one run of `text`'s tokens. At most
// `max_windows` windows (0: no cap), the first ones: the rest of the text is dropped. Type ids
// are kept when `keep_type_ids`. Throws onepass::Error(kInvalidInput) when the special tokens
// and the other text leave no room for the split one, or when `stride` is not smaller than that
// room.
std::vector<PreparedItem> split_into_windows(const tokenizer::Encoding& full, SplitText text,
                                             std::size_t limit, std::optional<std::size_t> stride,
                                             bool keep_type_ids, std::size_t max_windows = 0);

// Fills `out.values` and `out.num_tokens` from `out.windows`: the mean of the windows' values
// weighted by each window's token count (special tokens included). For logits this lets every
// token the model read count once per window it was read in, so a short last window weighs
// less; for mean-pooled embeddings it equals the mean over all the windows' tokens.
void combine_windows(ItemOutput& out);

}  // namespace onepass::runtime
