// POST /score (and /v1/score) {"model","text_1","text_2","truncate_prompt_tokens",
// "use_activation"} -> {"id":"score-…","object":"list","created","model","data":[{"index",
// "object":"score","score"}],"usage"}. text_1 and text_2 are strings or lists paired 1:1, 1:N or
// N:N as vLLM pairs them; data follows the pairs' order (unsorted). Scores are the model's
// CrossEncoder activation of its logit, as vLLM applies it: sigmoid unless config.json names
// another (api/common/rerank.h); the logit itself with use_activation false.
#include "api/common/api_error.h"
#include "api/common/rerank.h"
#include "api/common/task_guard.h"
#include "api/vllm/vllm.h"
#include "api/vllm/vllm_common.h"
#include "runtime/input_limits.h"

namespace onepass::api::vllm {

void handle_score(Call& call) {
  const Json body = parse_json_body(call.request);
  const auto model = select_vllm_model(call, body);
  require_task(model, runtime::bits_of({runtime::ModelTask::kReranker}), call.request.path(),
               "model");
  auto first = string_or_list(body, "text_1");
  const auto second = string_or_list(body, "text_2");
  // vLLM's rule and messages.
  if (first.size() > 1 && first.size() != second.size())
    throw ApiError(ApiErrorKind::kValidation, "Input lengths must be either 1:1, 1:N or N:N",
                   "text_1");
  if (first.empty())
    throw ApiError(ApiErrorKind::kValidation, "At least one text element must be given", "text_1");
  if (second.empty())
    throw ApiError(ApiErrorKind::kValidation, "At least one text_pair element must be given",
                   "text_2");
  check_batch_size(second.size(), call.options.max_client_batch_size);
  // Before a 1:N text_1 is copied into every pair.
  for (const auto& text : first) runtime::check_input_bytes(text, model.max_input_bytes, "text_1");
  runtime::InferenceRequest request;
  request.model = model.name;
  request.truncate = call.options.auto_truncate;
  parse_truncate_prompt_tokens(body, model, request);
  for (std::size_t i = 0; i < second.size(); ++i)
    request.items.push_back(
        query_document_item(first.size() == 1 ? first[0] : first[i], second[i]));
  // vLLM applies the model's CrossEncoder activation (config.json), sigmoid without one.
  if (use_activation(body)) request.score_activation = model.cross_encoder_activation;
  const std::string id = call.reply.request_id();
  const std::string name = model.name;
  submit_and_reply(call.service, std::move(request), call.reply,
                   [id, name](runtime::InferenceResult& result) {
                     JsonWriter json;
                     json.begin_object();
                     write_envelope(json, "score-", id, name);
                     json.key("data").begin_array();
                     for (std::size_t i = 0; i < result.items.size(); ++i)
                       json.begin_object()
                           .key("index")
                           .value(i)
                           .key("object")
                           .value("score")
                           .key("score")
                           .value(reranker_score(result.items[i]))
                           .end_object();
                     json.end_array();
                     write_usage(json, result.total_tokens);
                     json.end_object();
                     return json_response(json.take());
                   });
}

}  // namespace onepass::api::vllm
