// Errors of the HTTP API and their one mapping to statuses and bodies. Everything a route can
// fail with (a typed onepass::Error from the runtime, a request the dialect rejects, a JSON
// parse failure) becomes an ApiError here, and error_response() is the only place that turns an
// error into a status code and a dialect's error body (docs/api.md "Error classes"), using the
// status mapping and body writer that each dialect's DialectSpec (dialect.h) gives.
#pragma once

#include <exception>
#include <stdexcept>
#include <string>
#include <string_view>

#include "base/client_text.h"
#include "http/message.h"

namespace onepass::api {

struct DialectSpec;  // api/common/dialect.h

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
  kDeadlineExceeded,     // the caller's deadline passed before the work ran: 504
  kInsufficientStorage,  // 507
  kInternal,             // 500
};

// The message is cut to kMaxMessageBytes (base/client_text.h) whoever built it, so no error
// body or log line can grow with what a client sent; messages quote client text through
// quote_client_text() to begin with.
class ApiError : public std::runtime_error {
 public:
  ApiError(ApiErrorKind kind, const std::string& message, std::string param = {})
      : std::runtime_error(bounded_message(message)), kind_(kind), param_(std::move(param)) {}
  ApiErrorKind kind() const { return kind_; }
  // The request field at fault (OpenAI's "param"); empty when none.
  const std::string& param() const { return param_; }

 private:
  ApiErrorKind kind_;
  std::string param_;
};

// Any exception (ApiError, onepass::Error, anything else) as an ApiError.
ApiError to_api_error(std::exception_ptr error);

// The status of `kind` where a dialect does not say otherwise (dialect.h's http_status).
int default_http_status(ApiErrorKind kind);
// For dialects that answer every problem with the request itself with 400: validation, invalid
// input, tokenizer and too-many-inputs errors are 400, the rest as default_http_status().
int client_errors_400_http_status(ApiErrorKind kind);
// The kind of a transport-level status (413, 431, 400, 503, ...).
ApiErrorKind kind_for_status(int status);

// {"error": message}: the error body of unknown routes and of the dialects that use it.
std::string plain_error_body(const ApiError& error, int status);

// Status, body and headers (Retry-After, Allow, WWW-Authenticate) for one error: the status
// and body from the dialect's spec.
http::Response error_response(const DialectSpec& dialect, const ApiError& error);

}  // namespace onepass::api
