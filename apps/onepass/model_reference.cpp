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

std::filesystem::path precision_state_dir(const std::string& state_dir,
                                          const std::filesystem::path& hub_cache_dir) {
  if (!state_dir.empty()) return state_dir;
  return hub_cache_dir.parent_path() / "onepass";
}

}  // namespace onepass::app
