// Typed errors that cross module boundaries. Expected failures (bad files, bad input, overload)
// are thrown as onepass::Error with a kind; exactly one boundary per front end (the CLI's main,
// the HTTP error mapper) turns the kind into an exit code or a status.
#pragma once

#include <stdexcept>
#include <string>

namespace onepass {

enum class ErrorKind {
  kInvalidArgument,  // a caller's option or request field is wrong (CLI exit 2, HTTP 4xx)
  kInvalidInput,     // the data itself is bad: invalid UTF-8, id outside vocab, too many tokens
  kInvalidModel,     // a model folder is broken: config, safetensors, shapes, NaN weights
  kUnsupported,      // well-formed but not supported: architecture, tokenizer component
  kNotFound,         // a file, model or route that does not exist
  kOverloaded,       // admission control said no
  kUnavailable,      // not ready, loading, shutting down
  kBackend,          // the forward pass produced something unusable (NaN/Inf)
  kInternal,         // a broken invariant
  // The caller's deadline passed before the work ran (gRPC DEADLINE_EXCEEDED, HTTP 504).
  kDeadlineExceeded,
};

const char* error_kind_name(ErrorKind kind);

class Error : public std::runtime_error {
 public:
  Error(ErrorKind kind, const std::string& message) : std::runtime_error(message), kind_(kind) {}
  ErrorKind kind() const { return kind_; }

 private:
  ErrorKind kind_;
};

// Always-on invariant check: a failure is a bug in onepass, never the user's input.
#define ONEPASS_CHECK(cond, msg)                                                             \
  do {                                                                                       \
    if (!(cond))                                                                             \
      throw ::onepass::Error(::onepass::ErrorKind::kInternal,                                \
                             std::string("internal check failed: ") + #cond + ": " + (msg)); \
  } while (0)

}  // namespace onepass
