// Query-document relevance with a cross-encoder (a one-label sequence classifier), shared by
// every route that reranks or scores pairs: TEI /rerank, Cohere/Jina /v1|v2/rerank and vLLM
// /score. One definition of which models qualify, how a pair is submitted and how its logit
// becomes a score, so that the dialects can only differ in their JSON.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "runtime/service.h"

namespace onepass::api {

// One (query, document) input; the tokenizer places the query first, as TEI, Cohere and the
// sentence-transformers CrossEncoder do.
runtime::InferenceItem query_document_item(std::string query, std::string document);

// The activation a relevance score applies to the logit, for InferenceRequest::score_activation
// (the runtime applies it): sigmoid (HF's score for a one-label head, TEI's /rerank and
// Cohere's, whatever config.json says), or none when `raw`. sentence-transformers'
// CrossEncoder.predict (the toolkit's sentence-ranking, vLLM's /score) applies the model's own
// instead: ModelDescription::cross_encoder_activation.
std::optional<model::heads::Activation> relevance_activation(bool raw);

// The score of one reranker output, its activation applied by the runtime. ApiError kInternal
// when the output has no value.
float reranker_score(const runtime::ItemOutput& output);

}  // namespace onepass::api
