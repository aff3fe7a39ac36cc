#include "model/heads/postprocess.h"

#include <algorithm>
#include <cmath>

#include "base/error.h"
#include "weights/config.h"

namespace onepass::model::heads {
namespace {

void softmax_into(std::span<const float> logits, std::span<float> out) {
  if (logits.empty()) return;
  const float max = *std::max_element(logits.begin(), logits.end());
  float sum = 0.0f;
  for (std::size_t i = 0; i < logits.size(); ++i) sum += (out[i] = std::exp(logits[i] - max));
  for (auto& p : out) p /= sum;
}

}  // namespace

std::vector<float> softmax(std::span<const float> logits) {
  std::vector<float> out(logits.size());
  softmax_into(logits, out);
  return out;
}

float sigmoid(float logit) { return activate(logit, Activation::kSigmoid); }

const char* activation_name(Activation activation) {
  switch (activation) {
    case Activation::kIdentity:
      return "identity";
    case Activation::kTanh:
      return "tanh";
    case Activation::kSigmoid:
      break;
  }
  return "sigmoid";
}

const char* pooling_name(Pooling pooling) { return pooling == Pooling::kCls ? "cls" : "mean"; }

std::optional<Pooling> pooling_from_name(std::string_view name) {
  if (name == "cls") return Pooling::kCls;
  if (name == "mean") return Pooling::kMean;
  return std::nullopt;
}

std::optional<Activation> activation_from_torch_class(std::string_view class_path) {
  if (class_path == "torch.nn.modules.activation.Sigmoid") return Activation::kSigmoid;
  if (class_path == "torch.nn.modules.linear.Identity") return Activation::kIdentity;
  if (class_path == "torch.nn.modules.activation.Tanh") return Activation::kTanh;
  return std::nullopt;
}

void probabilities(std::span<const float> logits, bool multi_label, std::span<float> probs) {
  ONEPASS_CHECK(probs.size() == logits.size(), "probabilities needs one slot per logit");
  if (multi_label || logits.size() == 1) {
    for (std::size_t i = 0; i < logits.size(); ++i) probs[i] = sigmoid(logits[i]);
    return;
  }
  softmax_into(logits, probs);
}

std::size_t argmax(std::span<const float> values) {
  std::size_t best = 0;
  for (std::size_t i = 1; i < values.size(); ++i) {
    if (values[i] > values[best]) best = i;
  }
  return best;
}

std::string label_name(const std::vector<std::string>& id2label, std::size_t index) {
  if (index < id2label.size() && !id2label[index].empty()) return id2label[index];
  return weights::default_label_name(index);
}

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

std::string label_for(std::span<const float> logits, const std::vector<std::string>& id2label) {
  return label_name(id2label, argmax(logits));
}

void pool(const ForwardOutput& forward, std::size_t hidden, std::size_t index, Pooling pooling,
          std::span<float> out) {
  ONEPASS_CHECK(index + 1 < forward.token_offsets.size() && out.size() == hidden, "pool arguments");
  const std::size_t begin = forward.token_offsets[index];
  const std::size_t end = forward.token_offsets[index + 1];
  ONEPASS_CHECK(end > begin && forward.hidden_states.size() >= end * hidden,
                "pool needs hidden states");
  const float* rows = forward.hidden_states.data() + begin * hidden;
  if (pooling == Pooling::kCls) {
    std::copy(rows, rows + hidden, out.begin());
    return;
  }
  for (std::size_t c = 0; c < hidden; ++c) {
    double sum = 0.0;
    for (std::size_t t = 0; t < end - begin; ++t) sum += rows[t * hidden + c];
    out[c] = static_cast<float>(sum / static_cast<double>(end - begin));
  }
}

void l2_normalize(std::span<float> v) {
  double sq = 0.0;
  for (const float x : v) sq += static_cast<double>(x) * x;
  const double norm = std::max(std::sqrt(sq), 1e-12);
  for (auto& x : v) x = static_cast<float>(x / norm);
}

void shorten_and_normalize(std::vector<float>& v, std::size_t dimensions, bool normalize) {
  if (dimensions != 0 && dimensions < v.size()) v.resize(dimensions);
  if (normalize) l2_normalize(v);
}

float cosine_similarity(std::span<const float> a, std::span<const float> b) {
  ONEPASS_CHECK(a.size() == b.size(), "cosine similarity of vectors of one size");
  double aa = 0.0;
  double bb = 0.0;
  double ab = 0.0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    aa += static_cast<double>(a[i]) * a[i];
    bb += static_cast<double>(b[i]) * b[i];
    ab += static_cast<double>(a[i]) * b[i];
  }
  return static_cast<float>(ab / (std::max(std::sqrt(aa), 1e-12) * std::max(std::sqrt(bb), 1e-12)));
}

}  // namespace onepass::model::heads
