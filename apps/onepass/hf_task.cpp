#include "apps/onepass/hf_task.h"

#include <string>

#include "base/error.h"
#include "runtime/tasks.h"

namespace onepass::app {

void check_hf_task(std::string_view hf_task, const runtime::ModelDescription& model) {
  const runtime::PipelineRow* pipeline = runtime::find_pipeline(hf_task);
  if (pipeline == nullptr) {
    std::string served;
    for (const runtime::PipelineRow& row : runtime::pipeline_table()) {
      if (!served.empty()) served += ", ";
      served += row.name;
    }
    throw Error(ErrorKind::kInvalidArgument, "HF_TASK '" + std::string(hf_task) +
                                                 "' is not served by onepass (it serves " + served +
                                                 ")");
  }
  if (!runtime::pipeline_fits(*pipeline, model)) {
    throw Error(ErrorKind::kInvalidArgument, "HF_TASK is '" + std::string(hf_task) +
                                                 "' but model '" + model.name + "' serves " +
                                                 runtime::describe_task(model));
  }
}

}  // namespace onepass::app
