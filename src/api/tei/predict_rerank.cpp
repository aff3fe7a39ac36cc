// TEI /predict (sequence classification, single texts and pairs) and /rerank.
#include <algorithm>
#include <memory>

#include "api/common/api_error.h"
#include "api/common/json_writer.h"
#include "api/common/long_input.h"
#include "api/common/rerank.h"
#include "api/common/scores.h"
#include "api/common/task_guard.h"
#include "api/tei/tei.h"
#include "api/tei/tei_common.h"
#include "runtime/input_limits.h"

namespace onepass::api::tei {

namespace {

[[noreturn]] void bad_predict_inputs() {
  throw ApiError(ApiErrorKind::kValidation,
                 "`inputs` must be a string, a [premise, hypothesis] pair, or a list of those",
                 "inputs");
}

runtime::InferenceItem sequence_item(const Json& sequence) {
  runtime::InferenceItem item;
  if (sequence.is_string()) {
    item.text = sequence.get<std::string>();
  } else if (sequence.is_array() && (sequence.size() == 1 || sequence.size() == 2) &&
             std::all_of(sequence.begin(), sequence.end(),
                         [](const Json& j) { return j.is_string(); })) {
    item.text = sequence[0].get<std::string>();
    if (sequence.size() == 2) {
      item.text_pair = sequence[1].get<std::string>();
      require_non_empty(*item.text_pair);
    }
  } else {
    bad_predict_inputs();
  }
  require_non_empty(item.text);
  return item;
}

}  // namespace

void handle_predict(Call& call) {
  const Json body = parse_json_body(call.request);
  const auto model = select_tei_model(call);
  require_task(model,
               runtime::bits_of({runtime::ModelTask::kClassifier, runtime::ModelTask::kReranker}),
               "/predict");
  const Json* inputs = get_field(body, "inputs");
  if (!inputs) throw ApiError(ApiErrorKind::kValidation, "missing field `inputs`", "inputs");
  runtime::InferenceRequest request;
  request.model = model.name;
  bool batch = false;
  // TEI's rule: a top-level list of exactly two strings is ONE pair.
  const bool one_pair = inputs->is_array() && inputs->size() == 2 && (*inputs)[0].is_string() &&
                        (*inputs)[1].is_string();
  if (inputs->is_string() || one_pair) {
    request.items.push_back(sequence_item(*inputs));
  } else if (inputs->is_array()) {
    batch = true;
    if (inputs->empty())
      throw ApiError(ApiErrorKind::kValidation, "`inputs` cannot be an empty list", "inputs");
    if (inputs->size() > call.options.max_client_batch_size)
      throw ApiError(ApiErrorKind::kTooManyInputs,
                     "batch size " + std::to_string(inputs->size()) +
                         " > maximum allowed batch size " +
                         std::to_string(call.options.max_client_batch_size),
                     "inputs");
    for (const auto& sequence : *inputs) request.items.push_back(sequence_item(sequence));
  } else {
    bad_predict_inputs();
  }
  parse_truncation(body, call.options, request);
  runtime::apply_long_input(parse_long_input(body), call.options.long_input,
                            get_bool(body, "truncate"), request);
  const bool raw_scores = get_bool(body, "raw_scores").value_or(false);
  const auto received = call.request.received;
  submit_and_reply(call.service, std::move(request), call.reply,
                   [model, batch, raw_scores, received](runtime::InferenceResult& result) {
                     JsonWriter json;
                     if (batch) json.begin_array();
                     for (const auto& item : result.items) {
                       const auto scores = raw_scores
                                               ? item.values
                                               : apply_score_function(item.values.size() == 1
                                                                          ? ScoreFunction::kSigmoid
                                                                          : ScoreFunction::kSoftmax,
                                                                      item.values);
                       json.begin_array();
                       for (const auto& ranked : rank(scores))
                         json.begin_object()
                             .key("score")
                             .value(ranked.score)
                             .key("label")
                             .value(label_name(model.info.id2label, ranked.index))
                             .end_object();
                       json.end_array();
                     }
                     if (batch) json.end_array();
                     auto response = json_response(json.take());
                     response.headers = timing_headers(result, received);
                     return response;
                   });
}

void handle_rerank(Call& call) {
  const Json body = parse_json_body(call.request);
  const auto model = select_tei_model(call);
  require_task(model, runtime::bits_of({runtime::ModelTask::kReranker}), "/rerank");
  const auto query = get_string(body, "query");
  if (!query) throw ApiError(ApiErrorKind::kValidation, "missing field `query`", "query");
  require_non_empty(*query, "query");
  // Before the query is copied into every pair.
  runtime::check_input_bytes(*query, model.max_input_bytes, "the query");
  const Json* texts = get_field(body, "texts");
  if (!texts) throw ApiError(ApiErrorKind::kValidation, "missing field `texts`", "texts");
  if (!texts->is_array())
    throw ApiError(ApiErrorKind::kValidation, "`texts` must be a list of strings", "texts");
  if (texts->empty())
    throw ApiError(ApiErrorKind::kValidation, "`texts` cannot be an empty list", "texts");
  if (texts->size() > call.options.max_client_batch_size)
    throw ApiError(ApiErrorKind::kTooManyInputs,
                   "batch size " + std::to_string(texts->size()) +
                       " > maximum allowed batch size " +
                       std::to_string(call.options.max_client_batch_size),
                   "texts");
  runtime::InferenceRequest request;
  request.model = model.name;
  auto documents = std::make_shared<std::vector<std::string>>();
  for (const auto& text : *texts) {
    if (!text.is_string())
      throw ApiError(ApiErrorKind::kValidation, "`texts` must be a list of strings", "texts");
    require_non_empty(text.get_ref<const std::string&>(), "texts");
    runtime::check_input_bytes(text.get_ref<const std::string&>(), model.max_input_bytes, "a text");
    documents->push_back(text.get<std::string>());
    request.items.push_back(query_document_item(*query, documents->back()));
  }
  parse_truncation(body, call.options, request);
  request.score_activation = relevance_activation(get_bool(body, "raw_scores").value_or(false));
  const bool return_text = get_bool(body, "return_text").value_or(false);
  const auto received = call.request.received;
  submit_and_reply(
      call.service, std::move(request), call.reply,
      [documents, return_text, received](runtime::InferenceResult& result) {
        std::vector<float> scores;
        for (const auto& item : result.items) scores.push_back(reranker_score(item));
        JsonWriter json;
        json.begin_array();
        for (const auto& ranked : rank(scores)) {
          json.begin_object().key("index").value(ranked.index).key("score").value(ranked.score);
          if (return_text) json.key("text").value((*documents)[ranked.index]);
          json.end_object();
        }
        json.end_array();
        auto response = json_response(json.take());
        response.headers = timing_headers(result, received);
        return response;
      });
}

}  // namespace onepass::api::tei
