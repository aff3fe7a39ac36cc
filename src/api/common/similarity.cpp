#include "api/common/similarity.h"

#include "api/common/api_error.h"
#include "api/common/reply.h"
#include "model/heads/postprocess.h"

namespace onepass::api {
namespace {

[[noreturn]] void bad_shape() {
  throw ApiError(ApiErrorKind::kValidation,
                 "'inputs' must be {\"source_sentence\": string, \"sentences\": [string, ...]}",
                 "inputs");
}

std::string non_empty_text(const Json& value, const char* field) {
  if (!value.is_string()) bad_shape();
  std::string text = value.get<std::string>();
  if (text.empty())
    throw ApiError(ApiErrorKind::kEmpty, std::string("`") + field + "` cannot be empty", field);
  return text;
}

}  // namespace

bool is_similarity_inputs(const Json& inputs) {
  return inputs.is_object() && inputs.contains("source_sentence");
}

SimilarityInputs parse_similarity_inputs(const Json& inputs, std::size_t max_client_batch_size) {
  if (!inputs.is_object() || !inputs.contains("source_sentence") || !inputs.contains("sentences"))
    bad_shape();
  const Json& sentences = inputs["sentences"];
  if (!sentences.is_array()) bad_shape();
  if (sentences.empty())
    throw ApiError(ApiErrorKind::kEmpty, "`inputs.sentences` cannot be empty", "sentences");
  check_batch_size(sentences.size() + 1, max_client_batch_size);
  SimilarityInputs out;
  out.source = non_empty_text(inputs["source_sentence"], "source_sentence");
  out.sentences.reserve(sentences.size());
  for (const auto& sentence : sentences)
    out.sentences.push_back(non_empty_text(sentence, "sentences"));
  return out;
}

runtime::InferenceRequest similarity_request(SimilarityInputs inputs, const std::string& model) {
  runtime::InferenceRequest request;
  request.model = model;
  request.output = runtime::OutputKind::kPooled;
  request.items.reserve(inputs.sentences.size() + 1);
  runtime::InferenceItem source;
  source.text = std::move(inputs.source);
  request.items.push_back(std::move(source));
  for (auto& text : inputs.sentences) {
    runtime::InferenceItem item;
    item.text = std::move(text);
    request.items.push_back(std::move(item));
  }
  return request;
}

std::vector<float> similarities(const runtime::InferenceResult& result) {
  std::vector<float> out;
  if (result.items.empty()) return out;
  const auto& source = result.items.front().values;
  out.reserve(result.items.size() - 1);
  for (std::size_t i = 1; i < result.items.size(); ++i)
    out.push_back(model::heads::cosine_similarity(source, result.items[i].values));
  return out;
}

}  // namespace onepass::api
