// An error in one field of a request, found below the dialects by a task's own checks (a stride
// that leaves a window no room, a context that needs more windows than a client may send). It is
// an onepass::Error of kind kInvalidArgument (CLI exit 2); a dialect names `field` where its error
// shape has a parameter, and answers kTooManyInputs as it answers a batch above
// --max-client-batch-size.
#pragma once

#include <string>
#include <utility>

#include "base/error.h"

namespace onepass::runtime {

enum class FieldProblem {
  kInvalid,        // the field's value cannot be served
  kTooManyInputs,  // the request needs more inputs (windows) than one client may send
};

class FieldError : public Error {
 public:
  FieldError(FieldProblem problem, const std::string& message, std::string field)
      : Error(ErrorKind::kInvalidArgument, message), problem_(problem), field_(std::move(field)) {}
  FieldProblem problem() const { return problem_; }
  const std::string& field() const { return field_; }

 private:
  FieldProblem problem_;
  std::string field_;
};

}  // namespace onepass::runtime
