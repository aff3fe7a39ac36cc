// TEI /embed, /embed_all, /embed_sparse, /tokenize, /zero_shot (onepass's extension) and /info.
#include <cmath>
#include <memory>

#include "api/common/api_error.h"
#include "api/common/json_writer.h"
#include "api/common/long_input.h"
#include "api/common/task_guard.h"
#include "api/common/zero_shot.h"
#include "api/tei/tei.h"
#include "api/tei/tei_common.h"
#include "model/heads/postprocess.h"
#include "runtime/prompts.h"

namespace onepass::api::tei {

namespace {

// One item per text, the body's truncation applied: /embed, /embed_all and /embed_sparse.
runtime::InferenceRequest text_request(const Json& body, const ApiOptions& options,
                                       const runtime::ModelDescription& model,
                                       runtime::OutputKind output) {
  bool is_list = false;
  runtime::InferenceRequest request;
  request.model = model.name;
  request.output = output;
  for (auto& text : parse_string_inputs(body, options, is_list)) {
    runtime::InferenceItem item;
    item.text = std::move(text);
    request.items.push_back(std::move(item));
  }
  parse_truncation(body, options, request);
  request.prompt_name = get_string(body, "prompt_name");
  return request;
}

// Byte offset of each code point of `text`, plus the end: offsets are code points in the
// tokenizer's Encoding, bytes in TEI's answer.
std::vector<std::size_t> code_point_starts(std::string_view text) {
  std::vector<std::size_t> starts;
  starts.reserve(text.size() + 1);
  for (std::size_t i = 0; i < text.size(); ++i)
    if ((static_cast<unsigned char>(text[i]) & 0xC0) != 0x80) starts.push_back(i);
  starts.push_back(text.size());
  return starts;
}

}  // namespace

void handle_embed(Call& call) {
  const Json body = parse_json_body(call.request);
  const auto model = select_embedder(call);
  auto request = text_request(body, call.options, model, runtime::OutputKind::kPooled);
  request.embedding.normalize = get_bool(body, "normalize").value_or(true);
  if (const auto d = get_int(body, "dimensions")) {
    if (*d < 1 || *d > runtime::embedding_size(model))
      throw ApiError(
          ApiErrorKind::kValidation,
          "`dimensions` must be between 1 and " + std::to_string(runtime::embedding_size(model)),
          "dimensions");
    request.embedding.dimensions = static_cast<std::size_t>(*d);
  }
  runtime::apply_long_input(parse_long_input(body), call.options.long_input,
                            get_bool(body, "truncate"), request);
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
  const auto model = select_embedder(call);
  auto request = text_request(body, call.options, model, runtime::OutputKind::kTokens);
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
  require_task(model, runtime::bits_of({runtime::ModelTask::kMaskedLm}), "/embed_sparse");
  auto request = text_request(body, call.options, model, runtime::OutputKind::kSparse);
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
  bool is_list = false;
  const auto texts = parse_string_inputs(body, call.options, is_list);
  const bool add_special = get_bool(body, "add_special_tokens").value_or(true);
  // As TEI: the prompt is tokenized with the text, and offsets point into the two joined.
  const std::string_view prompt = runtime::prompt_for(model, get_string(body, "prompt_name"));
  JsonWriter json;
  json.begin_array();
  std::string prompted;
  for (const auto& input : texts) {
    const std::string_view text = runtime::with_prompt(prompt, input, prompted);
    const auto encoding = call.service.tokenize(model.name, text, std::nullopt, add_special);
    const auto starts = code_point_starts(text);
    json.begin_array();
    for (std::size_t i = 0; i < encoding.size(); ++i) {
      const bool special =
          i < encoding.special_tokens_mask.size() && encoding.special_tokens_mask[i];
      json.begin_object().key("id").value(static_cast<std::int64_t>(encoding.ids[i]));
      if (special || i >= encoding.offsets.size()) {
        json.key("text").value(i < encoding.tokens.size() ? encoding.tokens[i] : std::string());
        json.key("special").value(true).key("start").null().key("stop").null();
      } else {
        const auto [cp_start, cp_end] = encoding.offsets[i];
        const std::size_t last = starts.size() - 1;
        const std::size_t start = starts[std::min<std::size_t>(cp_start, last)];
        const std::size_t stop = starts[std::min<std::size_t>(cp_end, last)];
        json.key("text").value(
            std::string_view(text).substr(start, stop > start ? stop - start : 0));
        json.key("special").value(false);
        json.key("start").value(start).key("stop").value(stop);
      }
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

namespace {

// TEI's names for the weights' type; int8 has none there, so it keeps its own.
const char* model_dtype(const std::string& precision) {
  if (precision == "bf16") return "bfloat16";
  if (precision == "int8") return "int8";
  return "float32";
}

}  // namespace

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
  const std::size_t max_input =
      call.options.max_input_length && model.max_input_length
          ? std::min<std::size_t>(call.options.max_input_length, model.max_input_length)
          : static_cast<std::size_t>(model.max_input_length);
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
