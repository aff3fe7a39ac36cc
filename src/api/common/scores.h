// Logits into scores and ranked labels, as the Hugging Face text-classification pipeline and
// TEI compute them (float32, max-shifted softmax).
#pragma once

#include <span>
#include <string>
#include <vector>

namespace onepass::api {

enum class ScoreFunction { kSoftmax, kSigmoid, kNone };

std::vector<float> softmax(std::span<const float> logits);
float sigmoid(float logit);
std::vector<float> apply_score_function(ScoreFunction function, std::span<const float> logits);

struct RankedLabel {
  int index = 0;
  float score = 0;
};

// Indices sorted by score, highest first; ties keep the higher index first, as numpy's
// reversed argsort does in the pipelines.
std::vector<RankedLabel> rank(std::span<const float> scores);

// id2label[i], or "LABEL_i" when the config has no name for it.
std::string label_name(const std::vector<std::string>& id2label, int index);

}  // namespace onepass::api
