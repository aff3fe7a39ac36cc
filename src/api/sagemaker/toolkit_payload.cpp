#include "api/sagemaker/toolkit_payload.h"

#include "api/common/api_error.h"

namespace onepass::api::sagemaker {

namespace {

[[noreturn]] void bad_inputs() {
  throw ApiError(ApiErrorKind::kValidation,
                 "'inputs' must be a string, a list of strings, an object with 'text' and "
                 "'text_pair', or a list of such objects",
                 "inputs");
}

runtime::InferenceItem pair_item(const Json& object) {
  const Json* text = get_field(object, "text");
  const Json* pair = get_field(object, "text_pair");
  if (!text || !text->is_string())
    throw ApiError(ApiErrorKind::kValidation, "an input object needs a string 'text'", "inputs");
  runtime::InferenceItem item;
  item.text = text->get<std::string>();
  if (pair) {
    if (!pair->is_string())
      throw ApiError(ApiErrorKind::kValidation, "'text_pair' must be a string", "inputs");
    item.text_pair = pair->get<std::string>();
  }
  return item;
}

}  // namespace

ToolkitPayload split_payload(Json body) {
  ToolkitPayload payload;
  if (body.is_object() && body.contains("inputs")) {
    payload.inputs = std::move(body["inputs"]);
    if (body.contains("parameters") && !body["parameters"].is_null()) {
      if (!body["parameters"].is_object())
        throw ApiError(ApiErrorKind::kValidation, "'parameters' must be an object", "parameters");
      payload.parameters = std::move(body["parameters"]);
    }
    return payload;
  }
  // The toolkit takes a body without "inputs" as the inputs themselves.
  payload.inputs = std::move(body);
  return payload;
}

TextInputs parse_text_inputs(const Json& inputs, bool allow_pairs) {
  TextInputs out;
  if (inputs.is_string()) {
    out.shape = InputShape::kText;
    out.items.push_back({inputs.get<std::string>(), std::nullopt, false, {}, {}});
    return out;
  }
  if (inputs.is_object()) {
    if (!allow_pairs) bad_inputs();
    out.shape = InputShape::kPair;
    out.items.push_back(pair_item(inputs));
    return out;
  }
  if (!inputs.is_array()) bad_inputs();
  if (inputs.empty())
    throw ApiError(ApiErrorKind::kValidation, "'inputs' cannot be an empty list", "inputs");
  const bool objects = inputs.front().is_object();
  if (objects && !allow_pairs) bad_inputs();
  out.shape = objects ? InputShape::kPairList : InputShape::kTextList;
  out.items.reserve(inputs.size());
  for (const auto& element : inputs) {
    if (objects && element.is_object()) {
      out.items.push_back(pair_item(element));
    } else if (!objects && element.is_string()) {
      out.items.push_back({element.get<std::string>(), std::nullopt, false, {}, {}});
    } else {
      bad_inputs();
    }
  }
  return out;
}

ClassifyParameters parse_classify_parameters(const Json& parameters) {
  ClassifyParameters out;
  if (parameters.contains("top_k")) {
    out.top_k_given = true;
    const Json& top_k = parameters["top_k"];
    if (!top_k.is_null()) {
      if (!top_k.is_number_integer() || top_k.get<std::int64_t>() < 1 ||
          top_k.get<std::int64_t>() > 1000000)
        throw ApiError(ApiErrorKind::kValidation, "'top_k' must be a positive integer or null",
                       "top_k");
      out.top_k = static_cast<int>(top_k.get<std::int64_t>());
    }
  }
  if (const auto function = get_string(parameters, "function_to_apply")) {
    if (*function == "softmax")
      out.function = ScoreFunction::kSoftmax;
    else if (*function == "sigmoid")
      out.function = ScoreFunction::kSigmoid;
    else if (*function == "none")
      out.function = ScoreFunction::kNone;
    else
      throw ApiError(ApiErrorKind::kValidation,
                     "'function_to_apply' must be 'softmax', 'sigmoid' or 'none'",
                     "function_to_apply");
  }
  if (const Json* truncation = get_field(parameters, "truncation")) {
    // transformers takes a bool or a strategy name.
    if (truncation->is_boolean()) {
      out.truncate = truncation->get<bool>();
    } else if (truncation->is_string()) {
      const auto name = truncation->get<std::string>();
      if (name == "longest_first")
        out.strategy = tokenizer::TruncationStrategy::kLongestFirst;
      else if (name == "only_first")
        out.strategy = tokenizer::TruncationStrategy::kOnlyFirst;
      else if (name == "only_second")
        out.strategy = tokenizer::TruncationStrategy::kOnlySecond;
      else if (name != "do_not_truncate")
        throw ApiError(ApiErrorKind::kValidation, "'truncation' must be a bool or a strategy name",
                       "truncation");
      out.truncate = name != "do_not_truncate";
    } else {
      throw ApiError(ApiErrorKind::kValidation, "'truncation' must be a bool or a strategy name",
                     "truncation");
    }
  }
  if (const auto max_length = get_int(parameters, "max_length")) {
    if (*max_length < 1 || *max_length > 1000000)
      throw ApiError(ApiErrorKind::kValidation, "'max_length' must be a positive integer",
                     "max_length");
    out.max_length = static_cast<std::size_t>(*max_length);
  }
  // "batch_size" is accepted and ignored: onepass batches across requests itself.
  if (const Json* batch = get_field(parameters, "batch_size"); batch && !batch->is_number_integer())
    throw ApiError(ApiErrorKind::kValidation, "'batch_size' must be an integer", "batch_size");
  return out;
}

ScoreFunction default_score_function(const runtime::ModelDescription& model) {
  if (model.info.num_labels == 1 || model.info.multi_label) return ScoreFunction::kSigmoid;
  return ScoreFunction::kSoftmax;
}

}  // namespace onepass::api::sagemaker
