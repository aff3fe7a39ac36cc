#include "api/vllm/vllm_common.h"

#include <chrono>

#include "api/common/api_error.h"
#include "api/common/model_select.h"
#include "api/common/task_guard.h"

namespace onepass::api::vllm {

runtime::ModelDescription select_vllm_model(Call& call, const Json& body) {
  if (!body.is_object())
    throw ApiError(ApiErrorKind::kValidation, "the body must be a JSON object");
  auto model = select_model_from_body(call.service, get_string(body, "model").value_or(""));
  call.reply.set_model(model.name);
  // /classify and /score answer per sequence.
  require_task(model,
               runtime::bits_of({runtime::ModelTask::kClassifier, runtime::ModelTask::kReranker}),
               call.request.path(), "model");
  return model;
}

void parse_truncate_prompt_tokens(const Json& body, const runtime::ModelDescription& model,
                                  runtime::InferenceRequest& request) {
  const auto tokens = get_int(body, "truncate_prompt_tokens");
  if (!tokens) return;
  const auto limit = static_cast<std::int64_t>(model.max_input_length);
  if (*tokens == 0 || *tokens < -1)
    throw ApiError(ApiErrorKind::kValidation, "'truncate_prompt_tokens' must be -1 or positive",
                   "truncate_prompt_tokens");
  if (*tokens > limit)
    throw ApiError(ApiErrorKind::kValidation,
                   "truncate_prompt_tokens value (" + std::to_string(*tokens) +
                       ") is greater than max_model_len (" + std::to_string(limit) +
                       "). Please, select a smaller truncation size.",
                   "truncate_prompt_tokens");
  request.truncate = true;
  if (*tokens > 0) request.max_length = static_cast<std::size_t>(*tokens);
}

bool use_activation(const Json& body) {
  for (const char* field : {"use_activation", "activation", "softmax"})
    if (const auto flag = get_bool(body, field)) return *flag;
  return true;
}

std::vector<std::string> string_or_list(const Json& body, const char* field) {
  const Json* value = get_field(body, field);
  const std::string must = std::string("'") + field + "' must be a string or a list of strings";
  if (!value)
    throw ApiError(ApiErrorKind::kValidation, std::string("'") + field + "' is required", field);
  std::vector<std::string> texts;
  if (value->is_string()) {
    texts.push_back(value->get<std::string>());
  } else if (value->is_array()) {
    for (const auto& element : *value) {
      if (!element.is_string()) throw ApiError(ApiErrorKind::kValidation, must, field);
      texts.push_back(element.get<std::string>());
    }
  } else {
    throw ApiError(ApiErrorKind::kValidation, must, field);
  }
  return texts;
}

void write_envelope(JsonWriter& json, const std::string& id_prefix, const std::string& request_id,
                    const std::string& model) {
  const auto created = std::chrono::duration_cast<std::chrono::seconds>(
                           std::chrono::system_clock::now().time_since_epoch())
                           .count();
  json.key("id").value(id_prefix + request_id).key("object").value("list");
  json.key("created").value(static_cast<std::int64_t>(created)).key("model").value(model);
}

void write_usage(JsonWriter& json, std::size_t tokens) {
  json.key("usage").begin_object();
  json.key("prompt_tokens").value(tokens).key("total_tokens").value(tokens);
  json.key("completion_tokens").value(0).key("prompt_tokens_details").null();
  json.end_object();
}

}  // namespace onepass::api::vllm
