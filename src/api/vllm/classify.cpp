// POST /classify {"model","input","truncate_prompt_tokens","use_activation"} ->
// {"id":"classify-…","object":"list","created","model","data":[{"index","label","probs",
// "num_classes"}],"usage"}. probs are every label's probability in label order (softmax, or the
// sigmoid of a one-label head, as /predict computes them); label is the most probable one's name.
#include "api/common/api_error.h"
#include "api/common/scores.h"
#include "api/vllm/vllm.h"
#include "api/vllm/vllm_common.h"

namespace onepass::api::vllm {

void handle_classify(Call& call) {
  const Json body = parse_json_body(call.request);
  const auto model = select_vllm_model(call, body);
  const auto texts = string_or_list(body, "input");
  check_batch_size(texts.size(), call.options.max_client_batch_size);
  runtime::InferenceRequest request;
  request.model = model.name;
  request.truncate = call.options.auto_truncate;
  parse_truncate_prompt_tokens(body, model, request);
  for (const auto& text : texts) {
    runtime::InferenceItem item;
    item.text = text;
    request.items.push_back(std::move(item));
  }
  const bool activation = use_activation(body);
  const std::string id = call.reply.request_id();
  const auto labels = model.info.id2label;
  const std::string name = model.name;
  submit_and_reply(call.service, std::move(request), call.reply,
                   [activation, id, labels, name](runtime::InferenceResult& result) {
                     JsonWriter json;
                     json.begin_object();
                     write_envelope(json, "classify-", id, name);
                     json.key("data").begin_array();
                     for (std::size_t i = 0; i < result.items.size(); ++i) {
                       const auto& logits = result.items[i].values;
                       if (logits.empty())
                         throw ApiError(ApiErrorKind::kInternal, "empty classifier output");
                       const auto probs =
                           apply_score_function(!activation          ? ScoreFunction::kNone
                                                : logits.size() == 1 ? ScoreFunction::kSigmoid
                                                                     : ScoreFunction::kSoftmax,
                                                logits);
                       json.begin_object().key("index").value(i);
                       json.key("label").value(label_name(labels, rank(probs).front().index));
                       json.key("probs").floats(probs);
                       json.key("num_classes").value(probs.size()).end_object();
                     }
                     json.end_array();
                     write_usage(json, result.total_tokens);
                     json.end_object();
                     return json_response(json.take());
                   });
}

}  // namespace onepass::api::vllm
