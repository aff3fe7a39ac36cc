// What an idle gap costs memory-bound work on this machine, without onepass: streams a buffer
// of the size of a model's weights (default 344 MiB, mDeBERTa-base's fp32 encoder) three times
// in a row, back to back and after each idle gap, and prints the median time of each pass.
// With --threads N, N threads (pinned to the first N CPUs) stream one N-th of it each, as a
// batch-1 forward pass with N compute threads does.
//
// On the Xeon 2-vCPU VMs of issue 14, one thread: the first pass after 500 ms idle took 24.0 ms
// against 20.4 ms back to back, and the third still 22.6 ms, while pure arithmetic ran at the
// same speed after the gap. On a Zen 5 EPYC VM (2026-12-05, four runs each, first pass after
// 500 ms idle against back to back): one thread 1.16-1.50x, two threads 1.52-2.5x (6.3 against
// 15.5 ms at worst), the later passes recovering only part of it. The host's memory path slows
// down while the guest idles, two threads' share of it more than one's; no server in the guest
// can change that without keeping the machine busy.
// With --compute each thread runs a chain of multiply-adds instead (one per cache line it would
// have read, touching no memory): if that slows down after a gap too, the cores themselves run
// slower after idling (the host's frequency), not only the memory path.
//
//   g++ -O2 -std=c++20 -pthread -o /tmp/memory_after_idle bench/perf/memory_after_idle.cpp
//   /tmp/memory_after_idle [--threads N] [--compute] [MIB] [GAP_MS ...]
//   (default: 1 thread, streaming, 344 MiB, gaps 0 100 500 1000)
#include <pthread.h>
#include <sched.h>

#include <algorithm>
#include <barrier>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;

std::uint64_t stream(const std::uint64_t* words, std::size_t count) {
  std::uint64_t sum = 0;
  for (std::size_t i = 0; i < count; i += 8) sum += words[i];  // one word per line
  return sum;
}

// As long a dependent chain as stream() has loads, without loads: arithmetic only.
std::uint64_t compute(std::uint64_t seed, std::size_t count) {
  std::uint64_t x = seed;
  for (std::size_t i = 0; i < count; i += 8)
    x = x * 6364136223846793005ULL + 1442695040888963407ULL;
  return x;
}

void pin_to(int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  pthread_setaffinity_np(pthread_self(), sizeof set, &set);  // best effort
}

}  // namespace

int main(int argc, char** argv) {
  int threads = 1;
  bool arithmetic = false;
  int arg = 1;
  for (bool flag = true; flag && arg < argc;) {
    if (arg + 1 < argc && std::strcmp(argv[arg], "--threads") == 0) {
      threads = std::max(1, std::atoi(argv[arg + 1]));
      arg += 2;
    } else if (std::strcmp(argv[arg], "--compute") == 0) {
      arithmetic = true;
      arg += 1;
    } else {
      flag = false;
    }
  }
  const std::size_t mib = arg < argc ? std::strtoul(argv[arg++], nullptr, 10) : 344;
  std::vector<int> gaps;
  for (; arg < argc; ++arg) gaps.push_back(std::atoi(argv[arg]));
  if (gaps.empty()) gaps = {0, 100, 500, 1000};
  std::vector<std::uint64_t> buffer(mib * 1024 * 1024 / 8, 1);
  constexpr int kTrials = 9;
  constexpr int kPasses = 3;
  const int passes = static_cast<int>(gaps.size()) * kTrials * kPasses;

  // Each pass: the main thread waits out the gap (before the pass's first barrier), then every
  // thread streams its share; the pass ends when the last one reaches the second barrier.
  std::barrier<> start(threads);
  std::barrier<> done(threads);
  std::vector<std::uint64_t> sums(static_cast<std::size_t>(threads));
  const auto share = [&](int t) {
    const std::size_t begin = buffer.size() * t / threads;
    const std::size_t end = buffer.size() * (t + 1) / threads;
    return std::pair{buffer.data() + begin, end - begin};
  };
  const auto work = [&](const std::uint64_t* words, std::size_t count) {
    return arithmetic ? compute(words[0], count) : stream(words, count);
  };
  std::vector<std::thread> workers;
  for (int t = 1; t < threads; ++t) {
    workers.emplace_back([&, t] {
      pin_to(t);
      const auto [words, count] = share(t);
      for (int p = 0; p < passes; ++p) {
        start.arrive_and_wait();
        sums[static_cast<std::size_t>(t)] += work(words, count);
        done.arrive_and_wait();
      }
    });
  }
  pin_to(0);
  const auto [words, count] = share(0);
  std::printf("%zu MiB %s, %d thread(s), median of %d trials, ms per pass\n", mib,
              arithmetic ? "of arithmetic" : "streamed", threads, kTrials);
  for (const int gap : gaps) {
    std::vector<std::vector<double>> times(kPasses);
    for (int trial = 0; trial < kTrials; ++trial) {
      std::this_thread::sleep_for(std::chrono::milliseconds(gap));
      for (int p = 0; p < kPasses; ++p) {
        const auto begin = Clock::now();
        start.arrive_and_wait();
        sums[0] += work(words, count);
        done.arrive_and_wait();
        times[p].push_back(std::chrono::duration<double, std::milli>(Clock::now() - begin).count());
      }
    }
    std::printf("idle %4d ms before:", gap);
    for (auto& t : times) {
      std::nth_element(t.begin(), t.begin() + kTrials / 2, t.end());
      std::printf(" %7.2f", t[kTrials / 2]);
    }
    std::printf("\n");
  }
  for (auto& w : workers) w.join();
  std::uint64_t sink = 0;
  for (const auto s : sums) sink += s;
  return sink == 42 ? 1 : 0;  // keeps the sums from being optimized away
}
