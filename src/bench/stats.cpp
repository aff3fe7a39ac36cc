#include "bench/stats.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "base/error.h"

namespace onepass::bench {

double percentile(const std::vector<double>& sorted, double p) {
  ONEPASS_CHECK(!sorted.empty(), "percentile of an empty list");
  ONEPASS_CHECK(p >= 0 && p <= 100, "percentile outside [0, 100]");
  const double rank = p / 100.0 * static_cast<double>(sorted.size() - 1);
  const auto lo = static_cast<std::size_t>(std::floor(rank));
  const std::size_t hi = std::min(lo + 1, sorted.size() - 1);
  const double frac = rank - static_cast<double>(lo);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * frac;
}

LatencySummary summarize(std::vector<double> values) {
  LatencySummary s;
  if (values.empty()) return s;
  std::sort(values.begin(), values.end());
  s.count = values.size();
  s.mean = std::accumulate(values.begin(), values.end(), 0.0) / static_cast<double>(s.count);
  s.p50 = percentile(values, 50);
  s.p90 = percentile(values, 90);
  s.p95 = percentile(values, 95);
  s.p99 = percentile(values, 99);
  s.max = values.back();
  return s;
}

std::optional<double> batch_efficiency(double samples_per_s_at_n, double samples_per_s_at_1,
                                       std::size_t n) {
  if (!(samples_per_s_at_n > 0) || !(samples_per_s_at_1 > 0) || n == 0) return std::nullopt;
  return samples_per_s_at_n / samples_per_s_at_1 / static_cast<double>(n);
}

}  // namespace onepass::bench
