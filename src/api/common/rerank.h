// Query-document relevance with a cross-encoder (a one-label sequence classifier), shared by
// every route that reranks or scores pairs: TEI /rerank, Cohere/Jina /v1|v2/rerank and vLLM
// /score. One definition of which models qualify, how a pair is submitted and how its logit
// becomes a score, so that the dialects can only differ in their JSON.
#pragma once

#include <string>
#include <string_view>

#include "runtime/service.h"

namespace onepass::api {

// ApiError kValidation unless `model` is a reranker: "model 'x' is not a re-ranker: ROUTE needs
// a model with one label".
void require_reranker(const runtime::ModelDescription& model, std::string_view route);

// One (query, document) input; the tokenizer places the query first, as TEI, Cohere and the
// sentence-transformers CrossEncoder do.
runtime::InferenceItem query_document_item(std::string query, std::string document);

// The relevance score of one reranker output: sigmoid of its one logit (HF's score for a
// one-label head, TEI's /rerank and Cohere's, whatever config.json says), or the logit itself
// when `raw`. ApiError kInternal when the output has no value.
float relevance_score(const runtime::ItemOutput& output, bool raw);

// The score sentence-transformers' CrossEncoder.predict gives (the toolkit's sentence-ranking,
// vLLM's /score): the model's CrossEncoder activation of the logit. ApiError kInternal when the
// output has no value.
float cross_encoder_score(const runtime::ItemOutput& output, model::heads::Activation activation);

}  // namespace onepass::api
