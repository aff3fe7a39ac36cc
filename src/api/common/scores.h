// Logits into scores and ranked labels, as the Hugging Face text-classification pipeline and
// TEI compute them. softmax, sigmoid and label names are the engine's own
// (model/heads/postprocess.h), so every dialect and `onepass run` agree.
#pragma once

#include <span>
#include <string>
#include <vector>

#include "model/heads/postprocess.h"

namespace onepass::api {

using model::heads::label_name;
using model::heads::sigmoid;
using model::heads::softmax;

enum class ScoreFunction { kSoftmax, kSigmoid, kNone };

std::vector<float> apply_score_function(ScoreFunction function, std::span<const float> logits);

struct RankedLabel {
  int index = 0;
  float score = 0;
};

// Indices sorted by score, highest first; ties keep the higher index first, as numpy's
// reversed argsort does in the pipelines.
std::vector<RankedLabel> rank(std::span<const float> scores);

}  // namespace onepass::api
