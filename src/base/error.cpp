#include "base/error.h"

namespace onepass {

const char* error_kind_name(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::kInvalidArgument:
      return "invalid argument";
    case ErrorKind::kInvalidInput:
      return "invalid input";
    case ErrorKind::kInvalidModel:
      return "invalid model";
    case ErrorKind::kUnsupported:
      return "unsupported";
    case ErrorKind::kNotFound:
      return "not found";
    case ErrorKind::kOverloaded:
      return "overloaded";
    case ErrorKind::kUnavailable:
      return "unavailable";
    case ErrorKind::kBackend:
      return "backend";
    case ErrorKind::kDeadlineExceeded:
      return "deadline exceeded";
    case ErrorKind::kInternal:
      return "internal";
  }
  return "unknown";
}

}  // namespace onepass
