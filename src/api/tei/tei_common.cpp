#include "api/tei/tei_common.h"

#include "api/common/api_error.h"
#include "api/common/model_select.h"
#include "api/common/reply.h"
#include "api/common/task_guard.h"

namespace onepass::api::tei {

void require_non_empty(const std::string& text, const char* field) {
  if (text.empty())
    throw ApiError(ApiErrorKind::kEmpty, std::string("`") + field + "` cannot be empty", field);
}

std::vector<std::string> parse_string_inputs(const Json& body, const ApiOptions& options,
                                             bool& is_list) {
  const Json* inputs = get_field(body, "inputs");
  if (!inputs) throw ApiError(ApiErrorKind::kValidation, "missing field `inputs`", "inputs");
  std::vector<std::string> texts;
  if (inputs->is_string()) {
    is_list = false;
    texts.push_back(inputs->get<std::string>());
  } else if (inputs->is_array()) {
    is_list = true;
    check_list_size(inputs->size(), options.max_client_batch_size, "inputs");
    for (const auto& element : *inputs) {
      if (!element.is_string())
        throw ApiError(ApiErrorKind::kValidation, "`inputs` must be a string or a list of strings",
                       "inputs");
      texts.push_back(element.get<std::string>());
    }
  } else {
    throw ApiError(ApiErrorKind::kValidation, "`inputs` must be a string or a list of strings",
                   "inputs");
  }
  for (const auto& text : texts) require_non_empty(text);
  return texts;
}

void parse_truncation(const Json& body, const ApiOptions& options,
                      runtime::InferenceRequest& request) {
  request.truncate = get_bool(body, "truncate").value_or(options.auto_truncate);
  if (const auto direction = get_string(body, "truncation_direction")) {
    if (*direction == "right" || *direction == "Right")
      request.truncation_direction = tokenizer::TruncationDirection::kRight;
    else if (*direction == "left" || *direction == "Left")
      request.truncation_direction = tokenizer::TruncationDirection::kLeft;
    else
      throw ApiError(ApiErrorKind::kValidation, "`truncation_direction` must be 'right' or 'left'",
                     "truncation_direction");
  }
}

std::vector<http::Header> timing_headers(const runtime::InferenceResult& result,
                                         std::chrono::steady_clock::time_point received) {
  using std::chrono::duration_cast;
  using std::chrono::milliseconds;
  const auto ms = [](std::chrono::nanoseconds d) {
    return std::to_string(duration_cast<milliseconds>(d).count());
  };
  const auto total = std::chrono::steady_clock::now() - received;
  return {
      {"x-compute-time", ms(result.timings.total)},
      {"x-compute-tokens", std::to_string(result.total_tokens)},
      {"x-total-time", ms(total)},
      {"x-tokenization-time", ms(result.timings.tokenization)},
      {"x-queue-time", ms(result.timings.queue)},
      {"x-inference-time", ms(result.timings.inference)},
  };
}

runtime::ModelDescription select_tei_model(Call& call) {
  auto model = select_model_from_header(call.service, call.request);
  call.reply.set_model(model.name);
  return model;
}

runtime::ModelDescription select_embedder(Call& call) {
  auto model = select_tei_model(call);
  require_task(model, runtime::bits_of({runtime::ModelTask::kEmbedder}), call.request.path());
  return model;
}

}  // namespace onepass::api::tei
