// Zero-shot classification through an NLI model, the task below its transports: each
// (sequence, label) pair is one premise/hypothesis input, batched like any other, and the
// scores follow transformers' ZeroShotClassificationPipeline. The toolkit payload
// (parameters.candidate_labels) and TEI's /zero_shot read and write its JSON
// (api/common/zero_shot.h); another transport reuses this file as it is.
#pragma once

#include <string>
#include <vector>

#include "runtime/service.h"

namespace onepass::runtime {

struct ZeroShotSpec {
  std::vector<std::string> labels;
  std::string hypothesis_template = "This example is {}.";  // holds "{}" where the label goes
  bool multi_label = false;
};

// sequences x labels premise/hypothesis items, sequence-major; the premise is truncated first.
InferenceRequest expand_zero_shot(const std::vector<std::string>& sequences,
                                  const ZeroShotSpec& spec, const std::string& model);

struct ZeroShotAnswer {
  std::string sequence;
  std::vector<std::string> labels;  // sorted by score, highest first
  std::vector<float> scores;
};

// Without multi_label (and more than one label): softmax of the entailment logits across the
// labels. Otherwise, per label, softmax over [contradiction, entailment] where contradiction is
// index 0, or the last index when entailment is 0 (transformers' rule). A chunked sequence
// scores each label on its best window (the one giving that label its highest score). Throws
// onepass::Error kInternal when an output has fewer logits than the model's labels.
std::vector<ZeroShotAnswer> score_zero_shot(const std::vector<std::string>& sequences,
                                            const ZeroShotSpec& spec, const InferenceResult& result,
                                            const ModelDescription& model);

}  // namespace onepass::runtime
