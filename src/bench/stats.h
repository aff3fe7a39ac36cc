// Statistics the bench reports: latency percentiles, throughput and batch efficiency.
#pragma once

#include <cstddef>
#include <optional>
#include <vector>

namespace onepass::bench {

// Linear interpolation between closest ranks (numpy's default): rank = p/100 * (n-1) in the
// sorted values. `sorted` must be ascending and non-empty; p in [0, 100].
double percentile(const std::vector<double>& sorted, double p);

struct LatencySummary {
  std::size_t count = 0;
  double mean = 0, p50 = 0, p90 = 0, p95 = 0, p99 = 0, max = 0;  // same unit as the input
};

// All zeros for an empty list.
LatencySummary summarize(std::vector<double> values);

// samples/s at batch N over samples/s at batch 1, divided by N: 1.0 means a batch of N costs as
// much time as one input; 1/N means batching bought nothing. Empty when either rate is not > 0.
std::optional<double> batch_efficiency(double samples_per_s_at_n, double samples_per_s_at_1,
                                       std::size_t n);

}  // namespace onepass::bench
