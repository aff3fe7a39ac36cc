// Pieces shared by the TEI routes: input checks with TEI's error types and its timing headers.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "api/common/call.h"
#include "api/common/json_request.h"

namespace onepass::api::tei {

// TEI refuses an empty text with error_type Empty (400); an empty list is a validation error
// (422), as docs/api.md's error table says for every dialect but the toolkit and KServe.
void require_non_empty(const std::string& text, const char* field = "inputs");

// "inputs": a string or a non-empty list of strings (at most max_client_batch_size).
std::vector<std::string> parse_string_inputs(const Json& body, const ApiOptions& options,
                                             bool& is_list);

// "truncate" (default: --auto-truncate) and "truncation_direction".
void parse_truncation(const Json& body, const ApiOptions& options,
                      runtime::InferenceRequest& request);

// x-compute-time, x-compute-tokens, x-total-time, x-tokenization-time, x-queue-time,
// x-inference-time in milliseconds, as TEI sends them.
std::vector<http::Header> timing_headers(const runtime::InferenceResult& result,
                                         std::chrono::steady_clock::time_point received);

runtime::ModelDescription select_tei_model(Call& call);

// select_tei_model, refusing (422, by name) a model that is not a dense embedder.
runtime::ModelDescription select_embedder(Call& call);

}  // namespace onepass::api::tei
