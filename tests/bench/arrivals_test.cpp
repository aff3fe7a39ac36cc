// The open-loop schedule: gamma inter-arrival times with mean 1/rate and coefficient of variation
// 1/sqrt(burstiness), a fixed interval at infinite burstiness, reproducible per seed.
#include "bench/arrivals.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <numeric>

#include "base/error.h"

namespace onepass::bench {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

struct Moments {
  double mean, cv;
};

Moments moments(const std::vector<double>& v) {
  const double mean = std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size());
  double var = 0;
  for (double x : v) var += (x - mean) * (x - mean);
  var /= static_cast<double>(v.size() - 1);
  return {mean, std::sqrt(var) / mean};
}

class GammaSampler : public ::testing::TestWithParam<double> {};

TEST_P(GammaSampler, MeanIsOneOverRateAndCvIsOneOverSqrtBurstiness) {
  const double burstiness = GetParam();
  const double rate = 40.0;
  // 400k draws: the standard error of the mean is cv/sqrt(n) < 0.3%, far inside the 1% bound.
  const auto gaps = sample_intervals({rate, burstiness}, 400000, 1234);
  const Moments m = moments(gaps);
  EXPECT_NEAR(m.mean, 1.0 / rate, 0.01 / rate);
  EXPECT_NEAR(m.cv, 1.0 / std::sqrt(burstiness), 0.02 / std::sqrt(burstiness));
  for (double g : gaps) ASSERT_GT(g, 0.0);
}

INSTANTIATE_TEST_SUITE_P(Burstiness, GammaSampler, ::testing::Values(0.25, 0.5, 1.0, 2.0, 8.0));

TEST(Arrivals, InfiniteBurstinessIsAFixedInterval) {
  const auto gaps = sample_intervals({25.0, kInf}, 1000, 9);
  for (double g : gaps) ASSERT_EQ(g, 1.0 / 25.0);
}

TEST(Arrivals, InfiniteRateSendsEverythingAtOnce) {
  const auto offsets = send_offsets({kInf, 1.0}, 50, 3);
  for (const auto& o : offsets) ASSERT_EQ(o.count(), 0);
}

TEST(Arrivals, SameSeedSameScheduleOtherSeedOtherSchedule) {
  const ArrivalProcess p{10.0, 1.0};
  EXPECT_EQ(sample_intervals(p, 100, 42), sample_intervals(p, 100, 42));
  EXPECT_NE(sample_intervals(p, 100, 42), sample_intervals(p, 100, 43));
}

TEST(Arrivals, OffsetsStartAtZeroAndAccumulateTheGaps) {
  const ArrivalProcess p{100.0, 2.0};
  const auto gaps = sample_intervals(p, 20, 5);
  const auto offsets = send_offsets(p, 20, 5);
  ASSERT_EQ(offsets.size(), 20u);
  EXPECT_EQ(offsets[0].count(), 0);
  double t = 0;
  for (std::size_t i = 1; i < 20; ++i) {
    t += gaps[i - 1];
    EXPECT_NEAR(static_cast<double>(offsets[i].count()) * 1e-9, t, 1e-9);
  }
}

TEST(Arrivals, RejectsNonPositiveRateAndBurstiness) {
  EXPECT_THROW(sample_intervals({0.0, 1.0}, 1, 0), Error);
  EXPECT_THROW(sample_intervals({-3.0, 1.0}, 1, 0), Error);
  EXPECT_THROW(sample_intervals({1.0, 0.0}, 1, 0), Error);
  EXPECT_THROW(sample_intervals({std::nan(""), 1.0}, 1, 0), Error);
}

}  // namespace
}  // namespace onepass::bench
