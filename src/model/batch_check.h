// Validation of user-supplied sequences against a loaded model, before any compute: every id a
// kernel later uses as a table row is checked here, so kernels never bounds-check.
#pragma once

#include <optional>
#include <span>
#include <string>

#include "model/encoder.h"

namespace onepass::model {

// The problem with one sequence ("id 5000 is outside the vocabulary (vocab_size 2600)", "513
// tokens is more than the model's maximum of 512", ...), or nullopt when it can run.
std::optional<std::string> sequence_problem(const SequenceInput& sequence, const ModelInfo& info);

// Throws Error(kInvalidInput) naming the first bad sequence by its index in the batch.
void check_batch(std::span<const SequenceInput> batch, const ModelInfo& info);

// The start of every forward pass: check_batch, then out's token_offsets for the batch and its
// outputs cleared. Returns false for an empty batch (nothing to compute).
bool begin_forward(std::span<const SequenceInput> batch, const ModelInfo& info, ForwardOutput& out);

}  // namespace onepass::model
