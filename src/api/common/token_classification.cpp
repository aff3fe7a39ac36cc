#include "api/common/token_classification.h"

#include "api/common/api_error.h"

namespace onepass::api {

TokenClassificationParameters parse_token_classification_parameters(const Json& parameters) {
  TokenClassificationParameters out;
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
  if (get_field(parameters, "stride") != nullptr) {
    throw ApiError(ApiErrorKind::kValidation,
                   "'stride' is not supported yet; long inputs need truncation", "stride");
  }
  return out;
}

std::vector<model::heads::Entity> entities_of(std::string_view text,
                                              const runtime::ItemOutput& item,
                                              const runtime::ModelDescription& model,
                                              const TokenClassificationParameters& params) {
  const auto& enc = item.encoding;
  model::heads::TokenizedSequence sequence{text,       item.values, enc.ids,
                                           enc.tokens, enc.offsets, enc.special_tokens_mask};
  return model::heads::extract_entities(sequence, model.info.id2label, item.token_style,
                                        params.aggregation, params.ignore_labels);
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
