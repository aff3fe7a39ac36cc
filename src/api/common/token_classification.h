// Token classification (NER, PII) in the Hugging Face pipeline's answer shape, shared by the
// routes that serve it: the request's parameters, and each text's entities as JSON
// (model/heads/token_classification.h does the grouping).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "api/common/json_request.h"
#include "api/common/json_writer.h"
#include "model/heads/token_classification.h"
#include "runtime/service.h"

namespace onepass::api {

struct TokenClassificationParameters {
  model::heads::Aggregation aggregation = model::heads::Aggregation::kNone;
  std::vector<std::string> ignore_labels{"O"};  // the pipeline's default
};

// "aggregation_strategy" (none|simple|first|average|max) and "ignore_labels" (list of
// strings). ApiError kValidation naming the field for anything else, and for "stride", which
// onepass does not implement yet (long inputs: truncation, or 422).
TokenClassificationParameters parse_token_classification_parameters(const Json& parameters);

// One text's entities from its item of a kTokenLogits result.
std::vector<model::heads::Entity> entities_of(std::string_view text,
                                              const runtime::ItemOutput& item,
                                              const runtime::ModelDescription& model,
                                              const TokenClassificationParameters& params);

// [{"entity", "score", "index", "word", "start", "end"}, ...] for `none`, else
// [{"entity_group", "score", "word", "start", "end"}, ...].
void write_entities(JsonWriter& json, const std::vector<model::heads::Entity>& entities);

}  // namespace onepass::api
