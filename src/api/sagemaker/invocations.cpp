// POST /invocations (and /models/{model}/invoke) with the toolkit's answers, and POST / with
// the Inference API's answers. Same request body; the task follows the model.
#include <algorithm>
#include <memory>

#include "api/common/api_error.h"
#include "api/common/extract.h"
#include "api/common/long_input.h"
#include "api/common/model_select.h"
#include "api/common/question_answering.h"
#include "api/common/similarity.h"
#include "api/common/token_classification.h"
#include "api/common/zero_shot.h"
#include "api/sagemaker/fill_mask.h"
#include "api/sagemaker/sagemaker.h"
#include "api/sagemaker/sentence_tasks.h"
#include "api/sagemaker/toolkit_payload.h"
#include "model/heads/postprocess.h"

namespace onepass::api::sagemaker {

namespace {

// Which response shape: the toolkit's pipeline outputs or the Inference API's.
enum class Flavor { kToolkit, kInferenceApi };

runtime::ModelDescription model_for(Call& call) {
  auto model = call.path_model.empty() ? select_model_from_header(call.service, call.request)
                                       : select_model(call.service, call.path_model);
  call.reply.set_model(model.name);
  return model;
}

void write_labels(JsonWriter& json, const std::vector<float>& scores,
                  const std::vector<RankedLabel>& ranked, std::size_t count,
                  const runtime::ModelDescription& model) {
  json.begin_array();
  for (std::size_t i = 0; i < count && i < ranked.size(); ++i)
    json.begin_object()
        .key("label")
        .value(label_name(model.info.id2label, ranked[i].index))
        .key("score")
        .value(ranked[i].score)
        .end_object();
  json.end_array();
  (void)scores;
}

void classify(Call& call, const runtime::ModelDescription& model, const ToolkitPayload& payload,
              Flavor flavor) {
  TextInputs inputs = parse_text_inputs(payload.inputs, true);
  check_batch_size(inputs.items.size(), call.options.max_client_batch_size);
  const ClassifyParameters params = parse_classify_parameters(payload.parameters);
  runtime::InferenceRequest request;
  request.model = model.name;
  request.items = std::move(inputs.items);
  request.output = runtime::OutputKind::kLogits;
  request.truncate = params.truncate.value_or(call.options.auto_truncate);
  if (params.strategy) request.truncation_strategy = *params.strategy;
  request.max_length = params.max_length;
  runtime::apply_long_input(parse_long_input(payload.parameters), call.options.long_input,
                            params.truncate, request);
  const ScoreFunction function = params.function.value_or(default_score_function(model));
  const InputShape shape = inputs.shape;
  submit_and_reply(
      call.service, std::move(request), call.reply,
      [model, params, function, shape, flavor](runtime::InferenceResult& result) {
        JsonWriter json;
        const bool list = shape == InputShape::kTextList || shape == InputShape::kPairList;
        if (flavor == Flavor::kInferenceApi) {
          // [[{label, score}, ... all labels sorted]], one inner list per input.
          json.begin_array();
          for (auto& item : result.items) {
            const auto scores = apply_score_function(function, item.values);
            const auto ranked = rank(scores);
            write_labels(json, scores, ranked,
                         params.top_k ? static_cast<std::size_t>(*params.top_k) : ranked.size(),
                         model);
          }
          json.end_array();
          return json_response(json.take());
        }
        if (list) json.begin_array();
        for (auto& item : result.items) {
          const auto scores = apply_score_function(function, item.values);
          const auto ranked = rank(scores);
          if (params.top_k_given) {
            write_labels(json, scores, ranked,
                         params.top_k ? static_cast<std::size_t>(*params.top_k) : ranked.size(),
                         model);
          } else {
            // The pipeline's legacy answer: the top label; a lone string gets a list of one.
            if (shape == InputShape::kText) json.begin_array();
            json.begin_object()
                .key("label")
                .value(label_name(model.info.id2label, ranked.front().index))
                .key("score")
                .value(ranked.front().score)
                .end_object();
            if (shape == InputShape::kText) json.end_array();
          }
        }
        if (list) json.end_array();
        return json_response(json.take());
      });
}

void zero_shot(Call& call, const runtime::ModelDescription& model, const ToolkitPayload& payload) {
  require_zero_shot_model(model);
  TextInputs inputs = parse_text_inputs(payload.inputs, false);
  const ZeroShotSpec spec = parse_zero_shot(get_field(payload.parameters, "candidate_labels"),
                                            get_field(payload.parameters, "hypothesis_template"),
                                            get_field(payload.parameters, "multi_label"));
  check_batch_size(inputs.items.size(), call.options.max_client_batch_size);
  auto sequences = std::make_shared<std::vector<std::string>>();
  for (auto& item : inputs.items) sequences->push_back(std::move(item.text));
  check_zero_shot_inputs(*sequences, spec, model, call.options.max_client_batch_size);
  auto request = expand_zero_shot(*sequences, spec, model.name);
  runtime::apply_long_input(parse_long_input(payload.parameters), call.options.long_input,
                            std::nullopt, request);
  // One text gets one {sequence, labels, scores} object on both routes, as the pipeline answers
  // it: @huggingface/inference and huggingface_hub read "labels" and "scores" from an object.
  const bool list = inputs.is_list();
  submit_and_reply(call.service, std::move(request), call.reply,
                   [model, spec, sequences, list](runtime::InferenceResult& result) {
                     const auto answers = score_zero_shot(*sequences, spec, result, model);
                     JsonWriter json;
                     if (list) json.begin_array();
                     for (const auto& answer : answers) write_zero_shot(json, answer);
                     if (list) json.end_array();
                     return json_response(json.take());
                   });
}

void feature_extraction(Call& call, const runtime::ModelDescription& model,
                        const ToolkitPayload& payload, Flavor flavor) {
  TextInputs inputs = parse_text_inputs(payload.inputs, false);
  check_batch_size(inputs.items.size(), call.options.max_client_batch_size);
  const ClassifyParameters params = parse_classify_parameters(payload.parameters);
  runtime::InferenceRequest request;
  request.model = model.name;
  request.items = std::move(inputs.items);
  request.output =
      flavor == Flavor::kInferenceApi ? runtime::OutputKind::kPooled : runtime::OutputKind::kTokens;
  request.truncate = params.truncate.value_or(call.options.auto_truncate);
  request.max_length = params.max_length;
  runtime::apply_long_input(parse_long_input(payload.parameters), call.options.long_input,
                            params.truncate, request);
  const bool list = inputs.is_list();
  // The Inference API runs a sentence-transformers folder's encode(): unit vectors when its
  // modules end in Normalize.
  request.embedding.normalize = flavor == Flavor::kInferenceApi && model.normalizes;
  submit_and_reply(
      call.service, std::move(request), call.reply,
      [flavor, list](runtime::InferenceResult& result) {
        JsonWriter json;
        if (list) json.begin_array();
        for (auto& item : result.items) {
          if (flavor == Flavor::kInferenceApi) {
            json.floats(item.values);
            continue;
          }
          // The pipeline's [1][tokens][hidden] per input.
          const std::size_t tokens = std::max(item.num_tokens, 1);
          const std::size_t hidden = item.values.size() / tokens;
          json.begin_array().begin_array();
          for (std::size_t t = 0; t < tokens; ++t)
            json.floats(std::span<const float>(item.values).subspan(t * hidden, hidden));
          json.end_array().end_array();
        }
        if (list) json.end_array();
        return json_response(json.take());
      });
}

// The token-classification pipeline's answer: a text gets its list of entities, a list of
// texts a list of those. Both flavors answer alike, as the pipeline does. `max_length` (a
// onepass extension) bounds the windows of `stride` as it bounds truncation.
void token_classification(Call& call, const runtime::ModelDescription& model,
                          const ToolkitPayload& payload) {
  TextInputs inputs = parse_text_inputs(payload.inputs, false);
  check_batch_size(inputs.items.size(), call.options.max_client_batch_size);
  const ClassifyParameters truncation = parse_classify_parameters(payload.parameters);
  const runtime::TokenClassificationOptions params =
      parse_token_classification_parameters(payload.parameters);
  std::vector<std::string> texts;
  for (auto& item : inputs.items) texts.push_back(std::move(item.text));
  std::size_t limit = static_cast<std::size_t>(model.max_input_length);
  if (truncation.max_length != 0) limit = std::min(limit, truncation.max_length);
  runtime::InferenceRequest request;
  request.model = model.name;
  request.truncate = truncation.truncate.value_or(call.options.auto_truncate);
  request.max_length = truncation.max_length;
  auto plan = std::make_shared<std::vector<runtime::TokenClassificationText>>(
      runtime::add_token_classification_items(call.service, model, std::move(texts), params, limit,
                                              call.options.max_client_batch_size, request));
  const bool list = inputs.is_list();
  submit_and_reply(call.service, std::move(request), call.reply,
                   [model, params, plan, list](runtime::InferenceResult& result) {
                     JsonWriter json;
                     if (list) json.begin_array();
                     for (const auto& text : *plan)
                       write_entities(json, runtime::entities_of(text, result, model, params));
                     if (list) json.end_array();
                     return json_response(json.take());
                   });
}

// The question-answering pipeline's answer: a {question, context} gets its answer (or a list of
// top_k answers), a list of them a list of those; a list of one is answered as its one input,
// as the pipeline unwraps it.
void question_answering(Call& call, const runtime::ModelDescription& model,
                        const ToolkitPayload& payload) {
  bool list = false;
  std::vector<runtime::Question> questions = parse_questions(payload.inputs, list);
  list = list && questions.size() > 1;
  check_batch_size(questions.size(), call.options.max_client_batch_size);
  const runtime::QuestionAnsweringOptions params =
      parse_question_answering_parameters(payload.parameters);
  runtime::InferenceRequest request;
  request.model = model.name;
  auto plans = std::make_shared<std::vector<runtime::QuestionPlan>>(
      runtime::add_question_answering_items(call.service, model, std::move(questions), params,
                                            call.options.max_client_batch_size, request));
  submit_and_reply(call.service, std::move(request), call.reply,
                   [params, plans, list](runtime::InferenceResult& result) {
                     JsonWriter json;
                     if (list) json.begin_array();
                     for (const auto& plan : *plans)
                       write_answers(json, runtime::answers_of(plan, result, params));
                     if (list) json.end_array();
                     return json_response(json.take());
                   });
}

void invoke(Call& call, Flavor flavor) {
  ToolkitPayload payload = split_payload(parse_json_body(call.request));
  const auto model = model_for(call);
  const bool toolkit = flavor == Flavor::kToolkit;
  if (model.task == runtime::ModelTask::kEmbedder) {
    // The payload's shape says sentence-similarity whatever HF_TASK says; the toolkit's
    // sentence-embeddings answer differs from feature extraction's only by HF_TASK.
    if (is_similarity_inputs(payload.inputs) || call.options.hf_task == "sentence-similarity")
      return sentence_similarity(call, model, payload, toolkit);
    if (toolkit && call.options.hf_task == "sentence-embeddings")
      return sentence_embeddings(call, model, payload);
    return feature_extraction(call, model, payload, flavor);
  }
  if (model.task == runtime::ModelTask::kReranker && toolkit &&
      call.options.hf_task == "sentence-ranking")
    return sentence_ranking(call, model, payload);
  if (model.task == runtime::ModelTask::kTokenClassifier)
    return token_classification(call, model, payload);
  if (model.task == runtime::ModelTask::kQuestionAnswerer)
    return question_answering(call, model, payload);
  // A GLiNER model: the toolkit's {"inputs", "parameters": {"labels", ...}}, or gliner.serve's
  // {"text", "labels", ...} as the body (api/common/extract.h).
  if (model.task == runtime::ModelTask::kSpanExtractor) {
    const Json* inputs = &payload.inputs;
    return reply_extract(
        call, model,
        parse_extract_request(inputs->is_object() ? *inputs : Json{{"inputs", *inputs}},
                              &payload.parameters, model, call.options));
  }
  // The toolkit runs a *ForMaskedLM model as the fill-mask pipeline (SPLADE vectors are
  // TEI's /embed_sparse and KServe's).
  if (model.task == runtime::ModelTask::kMaskedLm) return fill_mask(call, model, payload);
  if (payload.parameters.contains("candidate_labels")) return zero_shot(call, model, payload);
  classify(call, model, payload, flavor);
}

}  // namespace

void handle_invocations(Call& call) { invoke(call, Flavor::kToolkit); }

void handle_inference_api(Call& call) { invoke(call, Flavor::kInferenceApi); }

}  // namespace onepass::api::sagemaker
