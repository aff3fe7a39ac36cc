#include "api/common/token_classification.h"

#include "api/common/api_error.h"

namespace onepass::api {

runtime::TokenClassificationOptions parse_token_classification_parameters(const Json& parameters) {
  runtime::TokenClassificationOptions out;
  if (const auto name = get_string(parameters, "aggregation_strategy")) {
    const auto aggregation = model::heads::aggregation_from_name(*name);
    if (!aggregation) {
      throw ApiError(ApiErrorKind::kValidation,
                     "'aggregation_strategy' must be none, simple, first, average or max",
                     "aggregation_strategy");
    }
    out.aggregation = *aggregation;
  }
  if (const Json* labels = get_field(parameters, "ignore_labels")) {
    if (!labels->is_array()) {
      throw ApiError(ApiErrorKind::kValidation, "'ignore_labels' must be a list of strings",
                     "ignore_labels");
    }
    out.ignore_labels.clear();
    for (const auto& label : *labels) {
      if (!label.is_string()) {
        throw ApiError(ApiErrorKind::kValidation, "'ignore_labels' must be a list of strings",
                       "ignore_labels");
      }
      out.ignore_labels.push_back(label.get<std::string>());
    }
  }
  if (const auto stride = get_int(parameters, "stride")) {
    if (*stride < 0)
      throw ApiError(ApiErrorKind::kValidation, "'stride' must be a non-negative integer",
                     "stride");
    // The pipeline's own refusal: overlapping windows need entities to merge.
    if (out.aggregation == model::heads::Aggregation::kNone)
      throw ApiError(ApiErrorKind::kValidation,
                     "'stride' needs an aggregation_strategy other than none (simple, first, "
                     "average or max)",
                     "stride");
    out.stride = static_cast<std::size_t>(*stride);
  }
  return out;
}

void write_entities(JsonWriter& json, const std::vector<model::heads::Entity>& entities) {
  json.begin_array();
  for (const auto& e : entities) {
    json.begin_object();
    json.key(e.index ? "entity" : "entity_group").value(e.label);
    json.key("score").value(e.score);
    if (e.index) json.key("index").value(*e.index);
    json.key("word").value(e.word);
    json.key("start").value(e.start);
    json.key("end").value(e.end);
    json.end_object();
  }
  json.end_array();
}

}  // namespace onepass::api
