#include "api/sagemaker/sentence_tasks.h"

#include <algorithm>
#include <memory>
#include <numeric>

#include "api/common/api_error.h"
#include "api/common/json_writer.h"
#include "api/common/rerank.h"
#include "api/common/similarity.h"
#include "model/heads/postprocess.h"

namespace onepass::api::sagemaker {
namespace {

// The toolkit's truncation parameters (`truncation`, `max_length`) on a request.
void apply_truncation(const ToolkitPayload& payload, const ApiOptions& options,
                      runtime::InferenceRequest& request) {
  const ClassifyParameters params = parse_classify_parameters(payload.parameters);
  request.truncate = params.truncate.value_or(options.auto_truncate);
  if (params.strategy) request.truncation_strategy = *params.strategy;
  request.max_length = params.max_length;
}

[[noreturn]] void bad_ranking_inputs() {
  throw ApiError(ApiErrorKind::kValidation,
                 "sentence-ranking 'inputs' must be a [query, text] pair, a list of such pairs, "
                 "or {\"query\": string, \"texts\": [string, ...]}",
                 "inputs");
}

runtime::InferenceItem ranking_pair(const Json& pair) {
  if (!pair.is_array() || pair.size() != 2 || !pair[0].is_string() || !pair[1].is_string())
    bad_ranking_inputs();
  return query_document_item(pair[0].get<std::string>(), pair[1].get<std::string>());
}

}  // namespace

void sentence_similarity(Call& call, const runtime::ModelDescription& model,
                         const ToolkitPayload& payload, bool wrapped) {
  auto request = similarity_request(
      parse_similarity_inputs(payload.inputs, call.options.max_client_batch_size), model.name);
  apply_truncation(payload, call.options, request);
  submit_and_reply(call.service, std::move(request), call.reply,
                   [wrapped](runtime::InferenceResult& result) {
                     JsonWriter json;
                     if (wrapped) json.begin_object().key("similarities");
                     json.floats(similarities(result));
                     if (wrapped) json.end_object();
                     return json_response(json.take());
                   });
}

void sentence_embeddings(Call& call, const runtime::ModelDescription& model,
                         const ToolkitPayload& payload) {
  TextInputs inputs = parse_text_inputs(payload.inputs, false);
  check_batch_size(inputs.items.size(), call.options.max_client_batch_size);
  runtime::InferenceRequest request;
  request.model = model.name;
  request.items = std::move(inputs.items);
  request.output = runtime::OutputKind::kPooled;
  apply_truncation(payload, call.options, request);
  const bool list = inputs.is_list();
  request.embedding.normalize = model.normalizes;  // the folder's Normalize module
  submit_and_reply(call.service, std::move(request), call.reply,
                   [list](runtime::InferenceResult& result) {
                     JsonWriter json;
                     json.begin_object().key("embeddings");
                     if (list) json.begin_array();
                     for (const auto& item : result.items) json.floats(item.values);
                     if (list) json.end_array();
                     json.end_object();
                     return json_response(json.take());
                   });
}

void sentence_ranking(Call& call, const runtime::ModelDescription& model,
                      const ToolkitPayload& payload) {
  runtime::InferenceRequest request;
  request.model = model.name;
  request.output = runtime::OutputKind::kLogits;
  const Json& inputs = payload.inputs;
  // One [query, text] pair is answered with one score, as CrossEncoder.predict does.
  bool single = false;
  bool ranked = false;
  bool return_documents = false;
  auto texts = std::make_shared<std::vector<std::string>>();
  if (inputs.is_object()) {
    const Json* query = get_field(inputs, "query");
    const Json* given = get_field(inputs, "texts");
    if (!query || !query->is_string() || !given || !given->is_array() || given->empty())
      bad_ranking_inputs();
    return_documents = get_bool(inputs, "return_documents").value_or(false);
    for (const auto& text : *given) {
      if (!text.is_string()) bad_ranking_inputs();
      texts->push_back(text.get<std::string>());
      request.items.push_back(query_document_item(query->get<std::string>(), texts->back()));
    }
    ranked = true;
  } else if (inputs.is_array() && !inputs.empty() && inputs[0].is_string()) {
    request.items.push_back(ranking_pair(inputs));
    single = true;
  } else if (inputs.is_array() && !inputs.empty()) {
    for (const auto& pair : inputs) request.items.push_back(ranking_pair(pair));
  } else {
    bad_ranking_inputs();
  }
  check_batch_size(request.items.size(), call.options.max_client_batch_size);
  apply_truncation(payload, call.options, request);
  // CrossEncoder.predict's scores: the model's activation of the logit (config.json).
  request.score_activation = model.cross_encoder_activation;
  submit_and_reply(call.service, std::move(request), call.reply,
                   [single, ranked, return_documents, texts](runtime::InferenceResult& result) {
                     std::vector<float> scores;
                     scores.reserve(result.items.size());
                     for (const auto& item : result.items) scores.push_back(reranker_score(item));
                     JsonWriter json;
                     json.begin_object().key("scores");
                     if (single) {
                       json.value(scores[0]);
                     } else if (!ranked) {
                       json.floats(scores);
                     } else {
                       // Best first; a tie keeps the input order (CrossEncoder.rank sorts stably).
                       std::vector<std::size_t> order(scores.size());
                       std::iota(order.begin(), order.end(), 0);
                       std::stable_sort(
                           order.begin(), order.end(),
                           [&](std::size_t a, std::size_t b) { return scores[a] > scores[b]; });
                       json.begin_array();
                       for (const std::size_t i : order) {
                         json.begin_object().key("index").value(i).key("score").value(scores[i]);
                         if (return_documents) json.key("text").value((*texts)[i]);
                         json.end_object();
                       }
                       json.end_array();
                     }
                     json.end_object();
                     return json_response(json.take());
                   });
}

}  // namespace onepass::api::sagemaker
