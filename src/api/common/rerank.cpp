#include "api/common/rerank.h"

#include "api/common/api_error.h"
#include "model/heads/postprocess.h"

namespace onepass::api {

runtime::InferenceItem query_document_item(std::string query, std::string document) {
  runtime::InferenceItem item;
  item.text = std::move(query);
  item.text_pair = std::move(document);
  return item;
}

std::optional<model::heads::Activation> relevance_activation(bool raw) {
  if (raw) return std::nullopt;
  return model::heads::Activation::kSigmoid;
}

float reranker_score(const runtime::ItemOutput& output) {
  if (output.values.empty()) throw ApiError(ApiErrorKind::kInternal, "empty rerank output");
  return output.values[0];
}

}  // namespace onepass::api
