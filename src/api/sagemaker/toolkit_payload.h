// The Hugging Face inference toolkit's request body: {"inputs": ..., "parameters": {...}} or a
// bare body taken as the inputs, decoded into runtime items and typed parameters.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "api/common/json_request.h"
#include "api/common/scores.h"
#include "runtime/service.h"

namespace onepass::api::sagemaker {

enum class InputShape {
  kText,      // "text"
  kTextList,  // ["t1", "t2"]
  kPair,      // {"text": "p", "text_pair": "h"}
  kPairList,  // [{"text", "text_pair"}, ...]
};

struct ToolkitPayload {
  Json inputs;
  Json parameters = Json::object();
};

// Throws ApiError kValidation when "parameters" is not an object.
ToolkitPayload split_payload(Json body);

struct TextInputs {
  InputShape shape = InputShape::kText;
  std::vector<runtime::InferenceItem> items;
  bool is_list() const { return shape == InputShape::kTextList || shape == InputShape::kPairList; }
};

// `allow_pairs` false: only a string or a list of strings (zero-shot, feature extraction).
TextInputs parse_text_inputs(const Json& inputs, bool allow_pairs);

struct ClassifyParameters {
  bool top_k_given = false;               // absent: the pipeline's legacy top-1 answer
  std::optional<int> top_k;               // given as null: every label
  std::optional<ScoreFunction> function;  // absent: the model's default
  std::optional<bool> truncate;
  std::optional<tokenizer::TruncationStrategy> strategy;
  std::size_t max_length = 0;
};

ClassifyParameters parse_classify_parameters(const Json& parameters);

// The pipeline's default: sigmoid for one label or a multi-label problem, else softmax.
ScoreFunction default_score_function(const runtime::ModelDescription& model);

}  // namespace onepass::api::sagemaker
