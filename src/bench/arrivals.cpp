#include "bench/arrivals.h"

#include <cmath>
#include <random>

#include "base/error.h"

namespace onepass::bench {

void validate(const ArrivalProcess& process) {
  if (!(process.request_rate > 0)) {
    throw Error(ErrorKind::kInvalidArgument, "--request-rate must be > 0 (or inf)");
  }
  if (!(process.burstiness > 0)) {
    throw Error(ErrorKind::kInvalidArgument, "--burstiness must be > 0 (or inf)");
  }
}

std::vector<double> sample_intervals(const ArrivalProcess& process, std::size_t count,
                                     std::uint64_t seed) {
  validate(process);
  std::vector<double> gaps(count, 0.0);
  if (std::isinf(process.request_rate)) return gaps;
  const double mean = 1.0 / process.request_rate;
  if (std::isinf(process.burstiness)) {
    for (double& gap : gaps) gap = mean;
    return gaps;
  }
  // mt19937_64 and libstdc++'s gamma_distribution are both fully specified for a given build,
  // so a seed reproduces the same schedule run after run.
  std::mt19937_64 engine(seed);
  std::gamma_distribution<double> gamma(process.burstiness, mean / process.burstiness);
  for (double& gap : gaps) gap = gamma(engine);
  return gaps;
}

std::vector<std::chrono::nanoseconds> send_offsets(const ArrivalProcess& process, std::size_t count,
                                                   std::uint64_t seed) {
  const std::vector<double> gaps = sample_intervals(process, count, seed);
  std::vector<std::chrono::nanoseconds> offsets(count);
  double t = 0;
  for (std::size_t i = 0; i < count; ++i) {
    offsets[i] = std::chrono::nanoseconds(static_cast<std::int64_t>(std::llround(t * 1e9)));
    t += gaps[i];
  }
  return offsets;
}

}  // namespace onepass::bench
