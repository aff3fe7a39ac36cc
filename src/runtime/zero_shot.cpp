#include "runtime/zero_shot.h"

#include <algorithm>

#include "base/error.h"
#include "model/heads/postprocess.h"

namespace onepass::runtime {

namespace {

// The logits a (sequence, label) pair is scored with. A chunked sequence (docs/api.md "Long
// inputs") is scored on the window that supports the label most: the highest entailment logit,
// or with independent labels the highest entailment-minus-contradiction margin; either way
// the window that gives the label its highest score.
const std::vector<float>& best_window(const ItemOutput& item, int entail, int contradiction,
                                      bool independent) {
  if (item.windows.empty()) return item.values;
  const std::size_t needed = static_cast<std::size_t>(std::max(entail, contradiction)) + 1;
  const std::vector<float>* best = nullptr;
  float best_support = 0;
  for (const auto& window : item.windows) {
    if (window.values.size() < needed)
      throw Error(ErrorKind::kInternal, "zero-shot output has too few logits");
    const float support =
        independent ? window.values[entail] - window.values[contradiction] : window.values[entail];
    if (!best || support > best_support) {
      best = &window.values;
      best_support = support;
    }
  }
  return *best;
}

}  // namespace

InferenceRequest expand_zero_shot(const std::vector<std::string>& sequences,
                                  const ZeroShotSpec& spec, const std::string& model) {
  InferenceRequest request;
  request.model = model;
  request.output = OutputKind::kLogits;
  request.truncate = true;
  request.truncation_strategy = tokenizer::TruncationStrategy::kOnlyFirst;
  request.items.reserve(sequences.size() * spec.labels.size());
  const auto slot = spec.hypothesis_template.find("{}");
  for (const auto& sequence : sequences) {
    for (const auto& label : spec.labels) {
      InferenceItem item;
      item.text = sequence;
      std::string hypothesis = spec.hypothesis_template;
      hypothesis.replace(slot, 2, label);
      item.text_pair = std::move(hypothesis);
      request.items.push_back(std::move(item));
    }
  }
  return request;
}

std::vector<ZeroShotAnswer> score_zero_shot(const std::vector<std::string>& sequences,
                                            const ZeroShotSpec& spec, const InferenceResult& result,
                                            const ModelDescription& model) {
  const std::size_t n_labels = spec.labels.size();
  const int entail = model.entailment_index;
  const int num_labels = static_cast<int>(model.info.num_labels > 0 ? model.info.num_labels
                                                                    : model.info.id2label.size());
  const int contradiction = entail == 0 ? num_labels - 1 : 0;
  const bool independent = spec.multi_label || n_labels == 1;
  std::vector<ZeroShotAnswer> answers;
  answers.reserve(sequences.size());
  for (std::size_t s = 0; s < sequences.size(); ++s) {
    std::vector<float> scores(n_labels);
    std::vector<float> entail_logits(n_labels);
    for (std::size_t l = 0; l < n_labels; ++l) {
      const auto& logits =
          best_window(result.items.at(s * n_labels + l), entail, contradiction, independent);
      if (logits.size() <= static_cast<std::size_t>(std::max(entail, contradiction)))
        throw Error(ErrorKind::kInternal, "zero-shot output has too few logits");
      entail_logits[l] = logits[entail];
      if (independent) {
        const float pair[2] = {logits[contradiction], logits[entail]};
        scores[l] = model::heads::softmax(pair)[1];
      }
    }
    if (!independent) scores = model::heads::softmax(entail_logits);
    ZeroShotAnswer answer;
    answer.sequence = sequences[s];
    for (const auto& ranked : model::heads::rank(scores)) {
      answer.labels.push_back(spec.labels[ranked.index]);
      answer.scores.push_back(ranked.score);
    }
    answers.push_back(std::move(answer));
  }
  return answers;
}

}  // namespace onepass::runtime
