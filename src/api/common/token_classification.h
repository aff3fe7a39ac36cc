// Token classification (NER, PII) in the Hugging Face pipeline's JSON, shared by the routes that
// serve it (/invocations, POST /, /predict_tokens, KServe v2): the request's parameters read and
// each text's entities written. Windows and entity merging are the task's own, below the
// dialects (runtime/token_classification.h).
#pragma once

#include <vector>

#include "api/common/json_request.h"
#include "api/common/json_writer.h"
#include "runtime/token_classification.h"

namespace onepass::api {

// "aggregation_strategy" (none|simple|first|average|max), "ignore_labels" (list of strings) and
// "stride" (a non-negative integer; refused with `none`, as the pipeline refuses it). ApiError
// kValidation naming the field for anything else.
runtime::TokenClassificationOptions parse_token_classification_parameters(const Json& parameters);

// [{"entity", "score", "index", "word", "start", "end"}, ...] for `none`, else
// [{"entity_group", "score", "word", "start", "end"}, ...].
void write_entities(JsonWriter& json, const std::vector<model::heads::Entity>& entities);

}  // namespace onepass::api
