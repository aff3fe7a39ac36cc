// Sets the OpenMP team size of the calling thread for one forward pass and restores it after.
// oneDNN (GNU OpenMP build) and the kernels' `#pragma omp` loops both read this thread's
// nthreads-var, so LoadOptions::threads is honoured per call without touching other threads.
// A thread that opted in (pin_forward_teams) also gets its team pinned to CPUs here.
#pragma once

#include <omp.h>

#include "model/layers/cpu_pinning.h"

namespace onepass::model {

class ThreadScope {
 public:
  explicit ThreadScope(int threads) : previous_(omp_get_max_threads()) {
    omp_set_num_threads(threads > 0 ? threads : usable_cpus());
    pin_current_team();
  }
  ~ThreadScope() { omp_set_num_threads(previous_); }
  ThreadScope(const ThreadScope&) = delete;
  ThreadScope& operator=(const ThreadScope&) = delete;

 private:
  int previous_;
};

}  // namespace onepass::model
