#include "model/layers/cpu_pinning.h"

#include <omp.h>
#include <pthread.h>
#include <sched.h>

#include <cstdlib>
#include <vector>

namespace onepass::model {
namespace {

// The CPUs this process may use, as its affinity mask was the first time anyone asked: before
// any thread of ours is pinned, since pinning only happens after this is read.
const std::vector<int>& allowed_cpus() {
  static const std::vector<int> cpus = [] {
    std::vector<int> list;
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof set, &set) == 0) {
      for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
        if (CPU_ISSET(cpu, &set)) list.push_back(cpu);
      }
    }
    return list;
  }();
  return cpus;
}

bool user_binds_threads() {
  static const bool binds =
      std::getenv("OMP_PROC_BIND") != nullptr || std::getenv("OMP_PLACES") != nullptr;
  return binds;
}

thread_local int first_cpu_of_teams = -1;  // -1: this thread did not opt in
thread_local int pinned_to = -1;           // the CPU this thread is pinned to, -1: none

void pin_this_thread(int cpu) {
  if (pinned_to == cpu) return;
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  // A refusal (a CPU taken away from the cgroup since) leaves the thread where it is: slower
  // after idle gaps, never wrong.
  if (pthread_setaffinity_np(pthread_self(), sizeof set, &set) == 0) pinned_to = cpu;
}

}  // namespace

int usable_cpus() {
  const auto n = static_cast<int>(allowed_cpus().size());
  return n > 0 ? n : 1;
}

bool cpu_pinning_available() { return !user_binds_threads() && allowed_cpus().size() > 1; }

void pin_forward_teams(int first_cpu) { first_cpu_of_teams = first_cpu < 0 ? 0 : first_cpu; }

void pin_current_team() {
  if (first_cpu_of_teams < 0 || !cpu_pinning_available()) return;
  const std::vector<int>& cpus = allowed_cpus();
  const int first = first_cpu_of_teams;
  const auto cpu_of = [&](int team_thread) {
    return cpus[static_cast<std::size_t>(first + team_thread) % cpus.size()];
  };
  pin_this_thread(cpu_of(0));
  if (omp_get_max_threads() < 2) return;
    // The same pool threads serve this thread's later regions (libgomp keeps one pool per
    // master), so after the first forward pass this region makes no system call.
#pragma omp parallel
  {
    const int i = omp_get_thread_num();
    if (i != 0) pin_this_thread(cpu_of(i));
  }
}

}  // namespace onepass::model
