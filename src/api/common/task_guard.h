// A route's guard on the model's task: one message shape for every dialect, built from the task
// table (runtime/tasks.h), so that a route says which tasks it serves and nothing else.
#pragma once

#include <string>
#include <string_view>

#include "runtime/service.h"
#include "runtime/tasks.h"

namespace onepass::api {

// Returns when the model's task is in `tasks` (runtime::bits_of(ModelTask...)); else ApiError
// kValidation "model 'x' is <its kind>, not <a kind the route serves>, and cannot serve <route>;
// it answers ...", with `param` naming the body field that chose the model where there is one.
void require_task(const runtime::ModelDescription& model, unsigned tasks, std::string_view route,
                  std::string param = {});

}  // namespace onepass::api
