// What a FakeService (fake_service.h) answers for one request, with no engine: fixed, finite
// values computed from each input by a formula, so that a test can compute the answer it
// expects (fake_logits, fake_pooled) and answers differ by input. Shapes and per-item failures
// are the runtime's:
//   - logits [num_labels], pooled [hidden], tokens [num_tokens, hidden], a SPLADE vector
//     [vocab], token logits [num_tokens, num_labels] with the text's fake_encode() encoding,
//     fill-mask predictions (top_k, at most the targets, per "[MASK]");
//   - too many tokens without truncation, an empty or out-of-vocabulary pre-tokenized input and
//     a fill-mask text without a mask fail the request, as the runtime's prepare step does;
//   - LongInput::kChunk as runtime/windows.h does it for logits and pooled outputs: a text over
//     the limit becomes windows of the limit sharing `stride` tokens (a stride not below a
//     window's room fails the request), of the first text or (chunked_text) the second, at most
//     max_windows_per_item of them, each with its own values, combined by token count;
//   - runtime::finish_outputs last, as the runtime's scheduler applies it.
#pragma once

#include <string_view>
#include <vector>

#include "runtime/service.h"

namespace onepass::api::fuzzing {

// An input with this text gets a NaN first value when the service's nan_marker is on: the API
// tests' way to reach the API's guard against non-finite outputs.
inline constexpr std::string_view kNanMarker = "__nan__";

// `count` values in [-4, 4) from a hash of the item's text(s) or ids (at most 8 distinct ones).
std::vector<float> fake_logits(const runtime::InferenceItem& item, int count);

// An embedder's pooled vector: fake_logits shifted so that it is never all zero.
std::vector<float> fake_pooled(const runtime::InferenceItem& item, int hidden_size);

// The answer to `request` on `model`; an error fails the whole request (result.error).
runtime::InferenceResult fake_result(const runtime::InferenceRequest& request,
                                     const runtime::ModelDescription& model, bool nan_marker);

}  // namespace onepass::api::fuzzing
