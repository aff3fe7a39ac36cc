#include "api/sagemaker/fill_mask.h"

#include "api/common/api_error.h"
#include "api/common/json_writer.h"

namespace onepass::api::sagemaker {
namespace {

// The pipeline's parameters: top_k (default 5) and targets (a string or a list of strings).
runtime::FillMaskOptions parse_fill_mask_parameters(const Json& parameters) {
  runtime::FillMaskOptions options;
  if (const auto top_k = get_int(parameters, "top_k")) {
    if (*top_k < 1 || *top_k > 1000000)
      throw ApiError(ApiErrorKind::kValidation, "'top_k' must be a positive integer", "top_k");
    options.top_k = static_cast<std::size_t>(*top_k);
  }
  if (const Json* targets = get_field(parameters, "targets")) {
    const auto bad = [] {
      throw ApiError(ApiErrorKind::kValidation,
                     "'targets' must be a string or a non-empty list of strings", "targets");
    };
    if (targets->is_string()) {
      options.targets.push_back(targets->get<std::string>());
    } else if (targets->is_array() && !targets->empty()) {
      for (const Json& t : *targets) {
        if (!t.is_string()) bad();
        options.targets.push_back(t.get<std::string>());
      }
    } else {
      bad();
    }
  }
  return options;
}

void write_predictions(JsonWriter& json, const std::vector<runtime::MaskPrediction>& predictions) {
  json.begin_array();
  for (const auto& p : predictions) {
    json.begin_object()
        .key("score")
        .value(p.score)
        .key("token")
        .value(static_cast<std::int64_t>(p.token))
        .key("token_str")
        .value(p.token_str)
        .key("sequence")
        .value(p.sequence)
        .end_object();
  }
  json.end_array();
}

// One text's answer: the flat list for one mask, a list per mask for several.
void write_answer(JsonWriter& json, const runtime::ItemOutput& item) {
  if (item.predictions.size() == 1) return write_predictions(json, item.predictions[0]);
  json.begin_array();
  for (const auto& per_mask : item.predictions) write_predictions(json, per_mask);
  json.end_array();
}

}  // namespace

void fill_mask(Call& call, const runtime::ModelDescription& model, const ToolkitPayload& payload) {
  TextInputs inputs = parse_text_inputs(payload.inputs, false);
  check_batch_size(inputs.items.size(), call.options.max_client_batch_size);
  runtime::InferenceRequest request;
  request.model = model.name;
  request.items = std::move(inputs.items);
  request.output = runtime::OutputKind::kFillMask;
  request.fill_mask = parse_fill_mask_parameters(payload.parameters);
  const bool list = inputs.is_list() && request.items.size() > 1;
  submit_and_reply(call.service, std::move(request), call.reply,
                   [list](runtime::InferenceResult& result) {
                     JsonWriter json;
                     if (list) json.begin_array();
                     for (const auto& item : result.items) write_answer(json, item);
                     if (list) json.end_array();
                     return json_response(json.take());
                   });
}

}  // namespace onepass::api::sagemaker
