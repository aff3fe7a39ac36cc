// model/layers/cpu_pinning: a thread that opted in runs its forward passes' teams one thread per
// CPU, from its first CPU on; other threads and the "all cores" count are left alone.
#include "model/layers/cpu_pinning.h"

#include <gtest/gtest.h>
#include <omp.h>
#include <pthread.h>
#include <sched.h>

#include <mutex>
#include <set>
#include <thread>
#include <vector>

#include "model/layers/thread_scope.h"

namespace onepass::model {
namespace {

// The CPU each team thread is pinned to (-1: it may run on several).
std::vector<int> team_cpus() {
  std::vector<int> cpus(static_cast<std::size_t>(omp_get_max_threads()), -2);
  std::mutex mutex;
#pragma omp parallel
  {
    cpu_set_t set;
    CPU_ZERO(&set);
    int cpu = -1;
    if (pthread_getaffinity_np(pthread_self(), sizeof set, &set) == 0 && CPU_COUNT(&set) == 1) {
      for (int c = 0; c < CPU_SETSIZE; ++c) {
        if (CPU_ISSET(c, &set)) cpu = c;
      }
    }
    const std::lock_guard lock(mutex);
    cpus[static_cast<std::size_t>(omp_get_thread_num())] = cpu;
  }
  return cpus;
}

std::vector<int> process_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  std::vector<int> list;
  if (sched_getaffinity(0, sizeof set, &set) == 0) {
    for (int c = 0; c < CPU_SETSIZE; ++c) {
      if (CPU_ISSET(c, &set)) list.push_back(c);
    }
  }
  return list;
}

TEST(CpuPinning, AnOptedInThreadRunsItsTeamOneThreadPerCpu) {
  if (!cpu_pinning_available()) GTEST_SKIP() << "needs 2 CPUs (and no OMP_PROC_BIND/OMP_PLACES)";
  const std::vector<int> cpus = process_cpus();
  std::vector<int> pinned;
  std::vector<int> pinned_from_second;
  int team_size = 0;
  std::thread([&] {
    pin_forward_teams(0);
    const ThreadScope scope(0);  // all cores: still every CPU although this thread is pinned
    team_size = omp_get_max_threads();
    pinned = team_cpus();
  }).join();
  std::thread([&] {
    pin_forward_teams(1);
    const ThreadScope scope(2);
    pinned_from_second = team_cpus();
  }).join();
  EXPECT_EQ(team_size, static_cast<int>(cpus.size()));
  EXPECT_EQ(pinned, cpus);
  EXPECT_EQ(pinned_from_second, (std::vector<int>{cpus[1], cpus[0]}));
  EXPECT_EQ(usable_cpus(), static_cast<int>(cpus.size()));
}

TEST(CpuPinning, OtherThreadsAreLeftAlone) {
  std::vector<int> cpus;
  std::thread([&] {
    const ThreadScope scope(2);
    cpus = team_cpus();
  }).join();
  const bool one_cpu = process_cpus().size() == 1;
  for (int cpu : cpus) EXPECT_EQ(cpu, one_cpu ? process_cpus()[0] : -1);
}

}  // namespace
}  // namespace onepass::model
