// Open-loop arrival schedule. Inter-arrival times follow Gamma(shape = burstiness,
// scale = 1 / (rate * burstiness)): mean 1/rate whatever the burstiness, coefficient of variation
// 1/sqrt(burstiness). Burstiness 1 is a Poisson process, larger is smoother, infinite is a fixed
// interval; an infinite rate sends every request at time 0 and lets the concurrency cap pace them.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace onepass::bench {

struct ArrivalProcess {
  double request_rate = 0;  // requests per second; +inf for "as fast as allowed"
  double burstiness = 1.0;  // gamma shape; +inf for a fixed interval
};

// Throws Error(kInvalidArgument) for a rate or burstiness that is not > 0 (NaN included).
void validate(const ArrivalProcess& process);

// `count` inter-arrival gaps in seconds, reproducible for a given seed.
std::vector<double> sample_intervals(const ArrivalProcess& process, std::size_t count,
                                     std::uint64_t seed);

// Intended send offsets from the start of the run: 0, then the running sum of the gaps.
std::vector<std::chrono::nanoseconds> send_offsets(const ArrivalProcess& process, std::size_t count,
                                                   std::uint64_t seed);

}  // namespace onepass::bench
