#include "apps/onepass/model_reference.h"

#include "hub/progress.h"
#include "hub/resolve.h"

namespace onepass::app {

std::filesystem::path resolve_model_reference(const std::string& reference) {
  const hub::Environment env = hub::Environment::from_process();
  hub::ResolveOptions options;
  options.progress = hub::stderr_progress(env.progress);
  return hub::resolve_model(reference, env, options);
}

}  // namespace onepass::app
