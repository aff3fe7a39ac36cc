// Errors of the HTTP API and their one mapping to statuses and bodies. Everything a route can
// fail with (a typed onepass::Error from the runtime, a request the dialect rejects, a JSON
// parse failure) becomes an ApiError here, and error_response() is the only place that turns an
// error into a status code and a dialect's error body (docs/api.md "Error classes").
#pragma once

#include <exception>
#include <stdexcept>
#include <string>
#include <string_view>

#include "http/message.h"

namespace onepass::api {

// Which client family a route serves; it decides the error body and a few statuses.
enum class Dialect {
  kGeneric,       // unknown routes, /metrics
  kSageMaker,     // /invocations, /models*, /ping: the Hugging Face inference toolkit
  kInferenceApi,  // POST /: the Hugging Face Inference API
  kTei,           // /predict, /rerank, /embed, /tokenize, /zero_shot, /info, /health
  kKserve,        // /v2/...
  kOpenai,        // /v1/embeddings
  kCohere,        // /v1/rerank, /v2/rerank (Cohere, Jina)
  kVllm,          // /classify, /score, /v1/score
};

enum class ApiErrorKind {
  kBadRequest,           // not JSON, not UTF-8, too deeply nested, malformed framing: 400
  kUnsupportedMedia,     // content type is not JSON: 415
  kValidation,           // missing/mistyped field, bad parameter: 422 (400 toolkit, KServe)
  kEmpty,                // empty string input: 400 (TEI "Empty")
  kInvalidInput,         // too many tokens, id outside the vocabulary: 422
  kTokenizer,            // the tokenizer refused the text: 422 (TEI "Tokenizer")
  kTooManyInputs,        // more inputs than --max-client-batch-size: 422
  kUnauthorized,         // 401
  kNotFound,             // 404
  kMethodNotAllowed,     // 405
  kConflict,             // 409
  kPayloadTooLarge,      // 413
  kHeaderTooLarge,       // 431
  kOverloaded,           // 429 + Retry-After
  kUnavailable,          // 503
  kBackend,              // NaN/Inf output: 424
  kInsufficientStorage,  // 507
  kInternal,             // 500
};

class ApiError : public std::runtime_error {
 public:
  ApiError(ApiErrorKind kind, const std::string& message, std::string param = {})
      : std::runtime_error(message), kind_(kind), param_(std::move(param)) {}
  ApiErrorKind kind() const { return kind_; }
  // The request field at fault (OpenAI's "param"); empty when none.
  const std::string& param() const { return param_; }

 private:
  ApiErrorKind kind_;
  std::string param_;
};

// Any exception (ApiError, onepass::Error, anything else) as an ApiError.
ApiError to_api_error(std::exception_ptr error);

int http_status(Dialect dialect, ApiErrorKind kind);
// The kind of a transport-level status (413, 431, 400, 503, ...).
ApiErrorKind kind_for_status(int status);

// Status, body and headers (Retry-After, Allow, WWW-Authenticate) for one error.
http::Response error_response(Dialect dialect, const ApiError& error);

}  // namespace onepass::api
