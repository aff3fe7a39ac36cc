// Cuts one sequence's result out of a batch's ForwardOutput: logits for classifiers and
// rerankers, every token's logits for token classifiers, a pooled vector (CLS or mean over the
// sequence's real tokens; no padding exists in a ragged batch, then the sentence-transformers Dense
// modules) or the token-level hidden states for embedders.
#pragma once

#include <cstddef>
#include <span>

#include "model/encoder.h"
#include "model/heads/dense_module.h"
#include "runtime/service.h"

namespace onepass::runtime {

// Fills `out.values` for sequence `index` of `forward`; a pooled vector then goes through the
// model's Dense modules in order. Returns false when a value is NaN or infinite (the request
// then fails with kBackend; other sequences are unaffected).
bool extract_output(const model::ModelInfo& info, OutputKind kind, Pooling pooling,
                    std::span<const model::heads::DenseModule> dense,
                    const model::ForwardOutput& forward, std::size_t index, ItemOutput& out);

}  // namespace onepass::runtime
