// Turns one request item into the ids the encoder runs: tokenization with the request's
// truncation, or validation of pre-tokenized ids. Runs on the runtime's tokenizer threads,
// never on an HTTP I/O thread, and before batching, so that a bad input fails its own request
// and never the batch it would have joined.
#pragma once

#include <cstdint>
#include <vector>

#include "runtime/loaded_model.h"
#include "runtime/service.h"

namespace onepass::runtime {

struct PreparedItem {
  std::vector<std::int32_t> input_ids;
  std::vector<std::int32_t> token_type_ids;  // empty: all zeros
  tokenizer::Encoding encoding;              // kTokenLogits text inputs: kept for the answer
  // kFillMask: the positions of the mask tokens, and the ids of the request's targets (empty:
  // the whole vocabulary).
  std::vector<std::int32_t> mask_positions;
  std::vector<std::int32_t> target_ids;
  // kSpans: each word's first token, and the words' [start, end) in code points of the text.
  std::vector<std::int32_t> word_positions;
  std::vector<std::pair<std::uint32_t, std::uint32_t>> words;
};

// The token limit that applies to `request` on `model`: the request's max_length when given and
// smaller, else the model's max_input_length.
std::size_t effective_max_length(const LoadedModel& model, const InferenceRequest& request);

// Whether an over-long `item` of `request` is split into windows rather than truncated or
// refused: a text input, truncation off (`auto_truncate` yields to an explicit chunk policy),
// LongInput::kChunk, and an output the windows can be combined into (logits, pooled vectors).
bool chunks_long_input(const InferenceRequest& request, const InferenceItem& item);

// The sequences the encoder runs for one item: one, or the windows of a chunked long input
// (windows.h). Throws onepass::Error(kInvalidInput) for an input longer than the limit when
// truncation is off and it is not chunked (the message names both counts), ids outside the
// vocabulary, token type ids outside the model's type vocabulary or of the wrong length, an
// empty id list, and invalid UTF-8.
std::vector<PreparedItem> prepare_item(const LoadedModel& model, const InferenceRequest& request,
                                       const InferenceItem& item, bool auto_truncate);

}  // namespace onepass::runtime
