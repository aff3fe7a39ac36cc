// Turning a forward pass into answers, shared by `onepass run` and the server: class
// probabilities (softmax, or sigmoid for multi-label and 1-label models), the arg-max label,
// pooled sentence embeddings and L2 normalisation. Pure functions on float spans.
#pragma once

#include <cstddef>
#include <span>
#include <string>
#include <vector>

#include "model/encoder.h"

namespace onepass::model::heads {

enum class Pooling { kCls, kMean };

// Probabilities from one row of logits: softmax over the row, or an element-wise sigmoid when
// `multi_label` (problem_type multi_label_classification) or when the row has one logit
// (rerankers / scorers).
void probabilities(std::span<const float> logits, bool multi_label, std::span<float> probs);

// Index of the largest logit (the first one on ties, as torch.argmax).
std::size_t argmax(std::span<const float> values);

// id2label[argmax], or "LABEL_<i>" when id2label has no such entry.
std::string label_for(std::span<const float> logits, const std::vector<std::string>& id2label);

// Sequence `index` of a base-model forward, pooled into out[hidden]: its first token (cls) or
// the mean over its tokens (every token of a ragged batch is real; summed in double).
void pool(const ForwardOutput& forward, std::size_t hidden, std::size_t index, Pooling pooling,
          std::span<float> out);

// v / max(||v||₂, 1e-12), in place (torch.nn.functional.normalize).
void l2_normalize(std::span<float> v);

}  // namespace onepass::model::heads
