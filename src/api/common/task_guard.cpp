#include "api/common/task_guard.h"

#include "api/common/api_error.h"

namespace onepass::api {

void require_task(const runtime::ModelDescription& model, unsigned tasks, std::string_view route,
                  std::string param) {
  if ((tasks & runtime::bits_of({model.task})) != 0) return;
  std::string wanted;
  for (const runtime::TaskRow& row : runtime::task_table()) {
    if ((tasks & runtime::bits_of({row.task})) == 0) continue;
    if (!wanted.empty()) wanted += " or ";
    wanted += row.kind_of_model;
  }
  const runtime::TaskRow& own = runtime::task_row(model.task);
  std::string message = "model '" + model.name + "' is ";
  message += own.kind_of_model;
  message += ", not " + wanted + ", and cannot serve ";
  message += route;
  message += "; ";
  message += own.answers;
  throw ApiError(ApiErrorKind::kValidation, message, std::move(param));
}

}  // namespace onepass::api
