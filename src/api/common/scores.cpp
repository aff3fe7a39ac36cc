#include "api/common/scores.h"

#include <algorithm>

namespace onepass::api {

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

}  // namespace onepass::api
