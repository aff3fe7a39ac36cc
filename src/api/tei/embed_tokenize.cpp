// TEI /embed, /embed_all, /embed_sparse, /tokenize, /zero_shot (onepass's extension) and /info.
#include <cmath>
#include <memory>

#include "api/common/api_error.h"
#include "api/common/json_writer.h"
#include "api/common/long_input.h"
#include "api/common/task_guard.h"
#include "api/common/zero_shot.h"
#include "api/tei/tasks.h"
#include "api/tei/tei.h"
#include "api/tei/tei_common.h"
#include "model/heads/postprocess.h"

namespace onepass::api::tei {

void handle_embed(Call& call) {
  const Json body = parse_json_body(call.request);
  const auto model = select_tei_model(call);
  auto request = embed_request(body, call.options, model, call.request.path());
  const auto received = call.request.received;
  submit_and_reply(call.service, std::move(request), call.reply,
                   [received](runtime::InferenceResult& result) {
                     JsonWriter json;
                     json.begin_array();
                     for (const auto& item : result.items) json.floats(item.values);
                     json.end_array();
                     auto response = json_response(json.take());
                     response.headers = timing_headers(result, received);
                     return response;
                   });
}

// The last hidden state of every token, unpooled and unnormalised: per input a list of
// [hidden] vectors, special tokens included, and a list of inputs however many were sent.
void handle_embed_all(Call& call) {
  const Json body = parse_json_body(call.request);
  const auto model = select_tei_model(call);
  auto request = embed_all_request(body, call.options, model, call.request.path());
  const auto hidden = static_cast<std::size_t>(model.info.hidden_size);
  const auto received = call.request.received;
  submit_and_reply(call.service, std::move(request), call.reply,
                   [hidden, received](runtime::InferenceResult& result) {
                     JsonWriter json;
                     json.begin_array();
                     for (const auto& item : result.items) {
                       json.begin_array();
                       for (std::size_t row = 0; row + hidden <= item.values.size(); row += hidden)
                         json.floats(std::span<const float>(item.values).subspan(row, hidden));
                       json.end_array();
                     }
                     json.end_array();
                     auto response = json_response(json.take());
                     response.headers = timing_headers(result, received);
                     return response;
                   });
}

// SPLADE vectors: per input the vocabulary entries whose value is not 0, as
// [{"index", "value"}] in index order; a list of inputs however many were sent.
void handle_embed_sparse(Call& call) {
  const Json body = parse_json_body(call.request);
  const auto model = select_tei_model(call);
  auto request = embed_sparse_request(body, call.options, model, "/embed_sparse");
  const auto received = call.request.received;
  submit_and_reply(
      call.service, std::move(request), call.reply, [received](runtime::InferenceResult& result) {
        JsonWriter json;
        json.begin_array();
        for (const auto& item : result.items) {
          json.begin_array();
          for (std::size_t i = 0; i < item.values.size(); ++i) {
            if (item.values[i] == 0.0f) continue;
            json.begin_object().key("index").value(i).key("value").value(item.values[i]);
            json.end_object();
          }
          json.end_array();
        }
        json.end_array();
        auto response = json_response(json.take());
        response.headers = timing_headers(result, received);
        return response;
      });
}

void handle_tokenize(Call& call) {
  const Json body = parse_json_body(call.request);
  const auto model = select_tei_model(call);
  JsonWriter json;
  json.begin_array();
  for (const auto& tokens : tokenize(body, call.service, call.options, model)) {
    json.begin_array();
    for (const auto& token : tokens) {
      json.begin_object().key("id").value(token.id).key("text").value(token.text);
      if (token.special)
        json.key("special").value(true).key("start").null().key("stop").null();
      else
        json.key("special")
            .value(false)
            .key("start")
            .value(token.start)
            .key("stop")
            .value(token.stop);
      json.end_object();
    }
    json.end_array();
  }
  json.end_array();
  call.reply.json(json.take());
}

void handle_zero_shot(Call& call) {
  const Json body = parse_json_body(call.request);
  const auto model = select_tei_model(call);
  require_zero_shot_model(model);
  bool is_list = false;
  auto sequences =
      std::make_shared<std::vector<std::string>>(parse_string_inputs(body, call.options, is_list));
  const ZeroShotSpec spec =
      parse_zero_shot(get_field(body, "candidate_labels"), get_field(body, "hypothesis_template"),
                      get_field(body, "multi_label"));
  for (const auto& label : spec.labels) require_non_empty(label, "candidate_labels");
  check_zero_shot_inputs(*sequences, spec, model, call.options.max_client_batch_size);
  auto request = expand_zero_shot(*sequences, spec, model.name);
  runtime::apply_long_input(parse_long_input(body), call.options.long_input, std::nullopt, request);
  const auto received = call.request.received;
  submit_and_reply(call.service, std::move(request), call.reply,
                   [model, spec, sequences, is_list, received](runtime::InferenceResult& result) {
                     const auto answers = score_zero_shot(*sequences, spec, result, model);
                     JsonWriter json;
                     if (is_list) json.begin_array();
                     for (const auto& answer : answers) write_zero_shot(json, answer);
                     if (is_list) json.end_array();
                     auto response = json_response(json.take());
                     response.headers = timing_headers(result, received);
                     return response;
                   });
}

void handle_info(Call& call) {
  const auto model = select_tei_model(call);
  JsonWriter json;
  json.begin_object()
      .key("model_id")
      .value(model.name)
      .key("model_sha")
      .null()
      .key("model_dtype")
      .value(model_dtype(model.precision.precision))
      .key("model_type")
      .begin_object();
  if (model.task == runtime::ModelTask::kEmbedder || model.task == runtime::ModelTask::kMaskedLm) {
    const char* pooling = model.task == runtime::ModelTask::kMaskedLm
                              ? "splade"
                              : model::heads::pooling_name(model.pooling);
    json.key("embedding").begin_object().key("pooling").value(pooling).end_object();
  } else {
    json.key(model.task == runtime::ModelTask::kReranker ? "reranker" : "classifier")
        .begin_object();
    json.key("id2label").begin_object();
    for (std::size_t i = 0; i < model.info.id2label.size(); ++i)
      json.key(std::to_string(i)).value(model.info.id2label[i]);
    json.end_object().key("label2id").begin_object();
    for (std::size_t i = 0; i < model.info.id2label.size(); ++i)
      json.key(model.info.id2label[i]).value(i);
    json.end_object().end_object();
  }
  const std::size_t max_input = max_input_length(model, call.options);
  json.end_object()
      .key("max_concurrent_requests")
      .value(call.options.max_concurrent_requests)
      .key("max_input_length")
      .value(max_input)
      .key("max_batch_tokens")
      .value(call.options.max_batch_tokens)
      .key("max_batch_requests")
      .value(call.options.max_batch_requests)
      .key("max_client_batch_size")
      .value(call.options.max_client_batch_size)
      .key("auto_truncate")
      .value(call.options.auto_truncate)
      .key("tokenization_workers")
      .value(1)
      .key("version")
      .value(call.options.version)
      .key("sha")
      .null()
      .key("docker_label")
      .null()
      .key("precision");
  // onepass's own: what the model runs in and, under --precision auto, why (null until loaded).
  const runtime::PrecisionSelection& precision = model.precision;
  if (precision.precision.empty()) {
    json.null();
  } else {
    json.begin_object().key("served").value(precision.precision).key("asked").value(precision.mode);
    if (precision.mode == "auto") {
      json.key("source")
          .value(precision.source)
          .key("verdict")
          .value(precision.verdict)
          .key("choose_seconds")
          .value(static_cast<float>(precision.choose_seconds));
    }
    json.end_object();
  }
  json.end_object();
  call.reply.json(json.take());
}

}  // namespace onepass::api::tei
