#include "api/common/scores.h"

#include <algorithm>
#include <cmath>

namespace onepass::api {

std::vector<float> softmax(std::span<const float> logits) {
  std::vector<float> out(logits.size());
  if (logits.empty()) return out;
  const float max = *std::max_element(logits.begin(), logits.end());
  float sum = 0;
  for (std::size_t i = 0; i < logits.size(); ++i) {
    out[i] = std::exp(logits[i] - max);
    sum += out[i];
  }
  for (auto& v : out) v /= sum;
  return out;
}

float sigmoid(float logit) { return 1.0f / (1.0f + std::exp(-logit)); }

std::vector<float> apply_score_function(ScoreFunction function, std::span<const float> logits) {
  switch (function) {
    case ScoreFunction::kSoftmax:
      return softmax(logits);
    case ScoreFunction::kSigmoid: {
      std::vector<float> out(logits.begin(), logits.end());
      for (auto& v : out) v = sigmoid(v);
      return out;
    }
    case ScoreFunction::kNone:
      break;
  }
  return {logits.begin(), logits.end()};
}

std::vector<RankedLabel> rank(std::span<const float> scores) {
  std::vector<RankedLabel> out(scores.size());
  for (std::size_t i = 0; i < scores.size(); ++i) out[i] = {static_cast<int>(i), scores[i]};
  std::stable_sort(out.begin(), out.end(), [](const RankedLabel& a, const RankedLabel& b) {
    if (a.score != b.score) return a.score > b.score;
    return a.index > b.index;
  });
  return out;
}

std::string label_name(const std::vector<std::string>& id2label, int index) {
  if (index >= 0 && static_cast<std::size_t>(index) < id2label.size() && !id2label[index].empty())
    return id2label[index];
  return "LABEL_" + std::to_string(index);
}

}  // namespace onepass::api
