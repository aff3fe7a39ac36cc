// Truncation of per-sequence encodings before the post-processor, as the `tokenizers` crate's
// truncate_encodings does it (stride 0, no overflow kept).
#pragma once

#include <optional>

#include "tokenizer/tokenizer.h"

namespace onepass::tokenizer::hf_json {

// Cuts `first` / `second` so that together they hold at most `max_length` ids (the special
// tokens already subtracted by the caller). Throws Error(kInvalidInput) when only_first /
// only_second cannot remove enough, or only_second is asked for a single text.
void truncate_encodings(Encoding& first, std::optional<Encoding>& second, std::size_t max_length,
                        TruncationStrategy strategy, TruncationDirection direction);

// Keeps `max_len` ids from the right end (direction right) or the left end of `e`.
void truncate_encoding(Encoding& e, std::size_t max_len, TruncationDirection direction);

}  // namespace onepass::tokenizer::hf_json
