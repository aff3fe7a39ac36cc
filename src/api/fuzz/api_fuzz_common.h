// Shared by the API fuzz targets: sends fuzz bytes through the real api::Api (routing, model
// selection, the dialect's decoder and validation, submit, the completion's encoder and the
// error mapping) over the fake service (fake_service.h), and checks what must hold for any request:
//   - exactly one answer, after the service's completions ran;
//   - a status from docs/api.md's error classes, never 500 (an internal error on client input is a
//     bug: a decoder let an exception escape, or an encoder met a result it did not expect);
//   - a JSON body (when the answer says application/json) that strict JSON parsing accepts;
//   - an error message that is onepass's own words, not a leaked nlohmann exception;
//   - an error body under 1 KiB: client text is quoted as a short prefix, never echoed whole;
//   - header names and values without CR, LF or NUL (no response splitting).
//
// Compiled once with the fake service (api_fuzz_common.cpp, library onepass_api_fuzz_support)
// rather than in each of the targets: the harness and the fake were most of every target's
// compile.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "http/message.h"

namespace onepass::api::fuzzing {

// Aborts (so libFuzzer saves the input) unless `ok`.
void check(bool ok);

// Aborts after printing which rule `response` broke, and the answer itself.
[[noreturn]] void fail(const char* rule, const http::Response& response);

// The rules above for any answer (status, headers, JSON body, error text).
void check_response(const http::Response& response);

// The body of one POST, sent once to each single-model service, so that every task's decoding
// and encoding (classifier, reranker, embedder, token classifier, sparse embedder, question
// answerer) sees it. `path` may hold "{model}", replaced by each service's model name (KServe's
// infer route).
void post_to_each_task(std::string_view path, const std::uint8_t* data, std::size_t size);

}  // namespace onepass::api::fuzzing
