#include "api/common/zero_shot.h"

#include <string_view>

#include "api/common/api_error.h"
#include "runtime/input_limits.h"

namespace onepass::api {

namespace {

std::string trim(std::string_view s) {
  const auto is_space = [](char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; };
  while (!s.empty() && is_space(s.front())) s.remove_prefix(1);
  while (!s.empty() && is_space(s.back())) s.remove_suffix(1);
  return std::string(s);
}

}  // namespace

ZeroShotSpec parse_zero_shot(const Json* candidate_labels, const Json* hypothesis_template,
                             const Json* multi_label) {
  ZeroShotSpec spec;
  if (!candidate_labels)
    throw ApiError(ApiErrorKind::kValidation, "'candidate_labels' is required", "candidate_labels");
  if (candidate_labels->is_string()) {
    // transformers splits a string on commas and drops empty labels.
    const std::string all = candidate_labels->get<std::string>();
    std::size_t start = 0;
    while (start <= all.size()) {
      const auto comma = all.find(',', start);
      const auto label = trim(std::string_view(all).substr(
          start, comma == std::string::npos ? all.npos : comma - start));
      if (!label.empty()) spec.labels.push_back(label);
      if (comma == std::string::npos) break;
      start = comma + 1;
    }
  } else if (candidate_labels->is_array()) {
    for (const auto& label : *candidate_labels) {
      if (!label.is_string())
        throw ApiError(ApiErrorKind::kValidation, "'candidate_labels' must hold strings",
                       "candidate_labels");
      spec.labels.push_back(label.get<std::string>());
    }
  } else {
    throw ApiError(ApiErrorKind::kValidation,
                   "'candidate_labels' must be a list of strings or a comma-separated string",
                   "candidate_labels");
  }
  if (spec.labels.empty())
    throw ApiError(ApiErrorKind::kValidation, "'candidate_labels' needs at least one label",
                   "candidate_labels");
  if (hypothesis_template) {
    if (!hypothesis_template->is_string())
      throw ApiError(ApiErrorKind::kValidation, "'hypothesis_template' must be a string",
                     "hypothesis_template");
    spec.hypothesis_template = hypothesis_template->get<std::string>();
  }
  if (spec.hypothesis_template.find("{}") == std::string::npos)
    throw ApiError(ApiErrorKind::kValidation,
                   "'hypothesis_template' must contain {} where the label goes",
                   "hypothesis_template");
  if (multi_label) {
    if (!multi_label->is_boolean())
      throw ApiError(ApiErrorKind::kValidation, "'multi_label' must be a boolean", "multi_label");
    spec.multi_label = multi_label->get<bool>();
  }
  return spec;
}

void require_zero_shot_model(const runtime::ModelDescription& model) {
  if (model.task != runtime::ModelTask::kClassifier || model.entailment_index < 0)
    throw ApiError(ApiErrorKind::kValidation,
                   "model '" + model.name +
                       "' cannot do zero-shot classification: it has no label starting with "
                       "'entail'");
}

void check_zero_shot_inputs(const std::vector<std::string>& sequences, const ZeroShotSpec& spec,
                            const runtime::ModelDescription& model, std::size_t max_labels) {
  if (spec.labels.size() > max_labels)
    throw ApiError(ApiErrorKind::kTooManyInputs,
                   std::to_string(spec.labels.size()) + " candidate labels > maximum allowed " +
                       std::to_string(max_labels) + " (each label is one input per sequence)",
                   "candidate_labels");
  // onepass::Error kInvalidInput: 422 in every dialect.
  for (const auto& sequence : sequences)
    runtime::check_input_bytes(sequence, model.max_input_bytes, "an input");
  for (const auto& label : spec.labels)
    runtime::check_input_bytes(label, model.max_input_bytes, "a candidate label");
  runtime::check_input_bytes(spec.hypothesis_template, model.max_input_bytes,
                             "hypothesis_template");
}

void write_zero_shot(JsonWriter& json, const ZeroShotAnswer& answer) {
  json.begin_object().key("sequence").value(answer.sequence).key("labels").begin_array();
  for (const auto& label : answer.labels) json.value(label);
  json.end_array().key("scores").floats(answer.scores).end_object();
}

}  // namespace onepass::api
