#include "apps/onepass/openmp_spin.h"

#include <unistd.h>

#include <cstdlib>

namespace onepass::app {

void reexec_with_serve_spin(char** argv) {
  if (std::getenv("GOMP_SPINCOUNT") != nullptr || std::getenv("OMP_WAIT_POLICY") != nullptr)
    return;  // the user's choice, or this is the process already executed again
  if (setenv("GOMP_SPINCOUNT", kServeSpinCount, 1) != 0) return;
  execv("/proc/self/exe", argv);
  unsetenv("GOMP_SPINCOUNT");  // still the first process: its libgomp kept the default
}

}  // namespace onepass::app
