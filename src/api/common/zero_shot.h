// Zero-shot classification through an NLI model, shared by the toolkit payload
// (parameters.candidate_labels) and TEI's /zero_shot extension. Each (sequence, label) pair is
// one premise/hypothesis input, batched like any other; the scores follow transformers'
// ZeroShotClassificationPipeline.
#pragma once

#include <string>
#include <vector>

#include "api/common/json_request.h"
#include "api/common/json_writer.h"
#include "runtime/service.h"

namespace onepass::api {

struct ZeroShotSpec {
  std::vector<std::string> labels;
  std::string hypothesis_template = "This example is {}.";
  bool multi_label = false;
};

// candidate_labels: a list of strings or one comma-separated string; the template must hold
// "{}". Throws ApiError kValidation.
ZeroShotSpec parse_zero_shot(const Json* candidate_labels, const Json* hypothesis_template,
                             const Json* multi_label);

// Throws ApiError kValidation unless `model` is a classifier with an entailment label.
void require_zero_shot_model(const runtime::ModelDescription& model);

// Before expand_zero_shot, which copies every sequence once per label: each sequence, label and
// the template within the model's per-text byte cap (422), and at most `max_labels` labels (the
// client batch limit; 422 kTooManyInputs), so one request's expansion stays bounded.
void check_zero_shot_inputs(const std::vector<std::string>& sequences, const ZeroShotSpec& spec,
                            const runtime::ModelDescription& model, std::size_t max_labels);

// sequences x labels premise/hypothesis items, sequence-major; the premise is truncated first.
runtime::InferenceRequest expand_zero_shot(const std::vector<std::string>& sequences,
                                           const ZeroShotSpec& spec, const std::string& model);

struct ZeroShotAnswer {
  std::string sequence;
  std::vector<std::string> labels;  // sorted by score, highest first
  std::vector<float> scores;
};

// Without multi_label (and more than one label): softmax of the entailment logits across the
// labels. Otherwise, per label, softmax over [contradiction, entailment] where contradiction is
// index 0, or the last index when entailment is 0 (transformers' rule). A chunked sequence
// scores each label on its best window (the one giving that label its highest score).
std::vector<ZeroShotAnswer> score_zero_shot(const std::vector<std::string>& sequences,
                                            const ZeroShotSpec& spec,
                                            const runtime::InferenceResult& result,
                                            const runtime::ModelDescription& model);

void write_zero_shot(JsonWriter& json, const ZeroShotAnswer& answer);

}  // namespace onepass::api
