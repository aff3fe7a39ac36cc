// The inference toolkit's sentence-transformers tasks at /invocations (its
// sentence_transformers_utils pipelines), for the HF_TASK a SageMaker user sets:
// sentence-similarity, sentence-embeddings and sentence-ranking. The Inference API's
// sentence-similarity (POST /) answers the same scores as a bare list.
#pragma once

#include "api/common/call.h"
#include "api/sagemaker/toolkit_payload.h"

namespace onepass::api::sagemaker {

// {"inputs": {"source_sentence", "sentences"}} on an embedder: the cosine of the source's
// embedding with each sentence's; {"similarities": [...]} for the toolkit (`wrapped`), the bare
// list for the Inference API.
void sentence_similarity(Call& call, const runtime::ModelDescription& model,
                         const ToolkitPayload& payload, bool wrapped);

// HF_TASK sentence-embeddings on an embedder: encode()'s pooled vectors, unit length when the
// folder's modules.json ends in Normalize; {"embeddings": vector} for a string,
// {"embeddings": [vector, ...]} for a list.
void sentence_embeddings(Call& call, const runtime::ModelDescription& model,
                         const ToolkitPayload& payload);

// HF_TASK sentence-ranking on a reranker (CrossEncoder): `inputs` a [query, text] pair or a
// list of them -> {"scores": score or [score, ...]} in input order; or {"query", "texts",
// "return_documents"} -> {"scores": [{"index", "score"[, "text"]}, ...]} best first. Scores
// are CrossEncoder.predict's: the activation config.json names (identity for
// cross-encoder/ms-marco-MiniLM-L-6-v2: raw logits), the sigmoid without one.
void sentence_ranking(Call& call, const runtime::ModelDescription& model,
                      const ToolkitPayload& payload);

}  // namespace onepass::api::sagemaker
