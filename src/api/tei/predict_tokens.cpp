// TEI-style POST /predict_tokens: the token-classification pipeline's entities (TEI has no token
// classification route; this one takes TEI's request conventions and answers what /invocations
// answers for a token classifier).
#include <memory>

#include "api/common/api_error.h"
#include "api/common/json_writer.h"
#include "api/common/task_guard.h"
#include "api/common/token_classification.h"
#include "api/tei/tei.h"
#include "api/tei/tei_common.h"

namespace onepass::api::tei {

namespace {

// The pipeline's parameters, from "parameters" (the toolkit's place for them) with the same
// fields at the top level (TEI's place for options) taking precedence.
Json pipeline_parameters(const Json& body) {
  Json merged = Json::object();
  if (const Json* parameters = get_field(body, "parameters")) {
    if (!parameters->is_object())
      throw ApiError(ApiErrorKind::kValidation, "`parameters` must be an object", "parameters");
    merged = *parameters;
  }
  for (const char* field : {"aggregation_strategy", "ignore_labels", "stride"}) {
    if (const Json* value = get_field(body, field)) merged[field] = *value;
  }
  return merged;
}

}  // namespace

void handle_predict_tokens(Call& call) {
  const Json body = parse_json_body(call.request);
  const auto model = select_tei_model(call);
  require_task(model, runtime::bits_of({runtime::ModelTask::kTokenClassifier}), "/predict_tokens");
  bool is_list = false;
  auto texts = parse_string_inputs(body, call.options, is_list);
  const runtime::TokenClassificationOptions params =
      parse_token_classification_parameters(pipeline_parameters(body));
  runtime::InferenceRequest request;
  request.model = model.name;
  parse_truncation(body, call.options, request);
  auto plan = std::make_shared<std::vector<runtime::TokenClassificationText>>(
      runtime::add_token_classification_items(call.service, model, std::move(texts), params,
                                              static_cast<std::size_t>(model.max_input_length),
                                              call.options.max_client_batch_size, request));
  const auto received = call.request.received;
  submit_and_reply(call.service, std::move(request), call.reply,
                   [model, params, plan, is_list, received](runtime::InferenceResult& result) {
                     JsonWriter json;
                     if (is_list) json.begin_array();
                     for (const auto& text : *plan)
                       write_entities(json, runtime::entities_of(text, result, model, params));
                     if (is_list) json.end_array();
                     auto response = json_response(json.take());
                     response.headers = timing_headers(result, received);
                     return response;
                   });
}

}  // namespace onepass::api::tei
