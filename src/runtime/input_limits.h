// The per-text byte cap (docs/reliability.md: "a multi-megabyte string rejected before
// tokenizing"). Tokenizing costs time linear in the text however short the answer is cut, so every
// text of every dialect is measured in bytes first: by the runtime in submit() and tokenize() for
// each item and each side of a pair and for the fill-mask targets, and by the dialects before
// they copy a text into many items (zero-shot labels, the rerank query).
#pragma once

#include <cstddef>
#include <span>
#include <string>
#include <string_view>

#include "runtime/service.h"

namespace onepass::runtime {

// The derived cap: generous (English averages about 5 bytes a token, and a WordPiece word of up
// to 100 characters is one [UNK]) yet far below a multi-megabyte string.
inline constexpr std::size_t kInputBytesPerToken = 64;
inline constexpr std::size_t kMinInputBytes = 64 * 1024;

// The cap for texts sent to `model`: `configured` (--max-input-bytes) when nonzero, else
// kInputBytesPerToken x the model's max_input_length, at least kMinInputBytes.
std::size_t input_byte_limit(const ModelDescription& model, std::size_t configured);

// Throws onepass::Error(kInvalidInput) when `text` is longer than `limit` bytes (0: no limit).
// `what` names the text in the message ("input", "text_pair", "query", "candidate label").
void check_input_bytes(std::string_view text, std::size_t limit, std::string_view what);

// The fill-mask `targets` are tokenized for every text of the request, so together they are
// held to the cap of one text: their bytes summed, each counting at least one (a list of a
// million empty strings costs a million tokenizer calls per text). Throws as check_input_bytes.
void check_fill_mask_target_bytes(std::span<const std::string> targets, std::size_t limit);

}  // namespace onepass::runtime
