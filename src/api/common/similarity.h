// Sentence similarity: one source text against a list of texts, by the cosine of their pooled
// embeddings, as sentence-transformers' cos_sim computes it. TEI's /similarity and the
// toolkit's sentence-similarity task (`{"inputs": {"source_sentence", "sentences"}}`) share
// this; each answers in its own shape.
#pragma once

#include <string>
#include <vector>

#include "api/common/json_request.h"
#include "runtime/service.h"

namespace onepass::api {

struct SimilarityInputs {
  std::string source;
  std::vector<std::string> sentences;
};

// True when `inputs` is a sentence-similarity object (it has "source_sentence").
bool is_similarity_inputs(const Json& inputs);

// {"source_sentence": string, "sentences": [string, ...]}. Throws ApiError kValidation for
// another shape or more than `max_client_batch_size` texts (the source counts, as in TEI),
// kEmpty for an empty list or an empty text.
SimilarityInputs parse_similarity_inputs(const Json& inputs, std::size_t max_client_batch_size);

// One pooled-embedding request for `model`: the source first, then each sentence.
runtime::InferenceRequest similarity_request(SimilarityInputs inputs, const std::string& model);

// The cosine of the source's embedding with each sentence's, in the sentences' order.
std::vector<float> similarities(const runtime::InferenceResult& result);

}  // namespace onepass::api
