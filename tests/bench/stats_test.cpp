// Percentiles against hand-computed values (numpy's linear interpolation), batch efficiency
// arithmetic, and the run plan of the sweeps.
#include "bench/stats.h"

#include <gtest/gtest.h>

#include "base/error.h"
#include "bench/bench.h"

namespace onepass::bench {
namespace {

TEST(Percentile, InterpolatesBetweenClosestRanks) {
  const std::vector<double> v{15, 20, 35, 40, 50};
  EXPECT_DOUBLE_EQ(percentile(v, 0), 15);
  EXPECT_DOUBLE_EQ(percentile(v, 40), 29);  // rank 1.6: 20 + 0.6 * 15
  EXPECT_DOUBLE_EQ(percentile(v, 50), 35);
  EXPECT_DOUBLE_EQ(percentile(v, 90), 46);  // rank 3.6: 40 + 0.6 * 10
  EXPECT_DOUBLE_EQ(percentile(v, 100), 50);
}

TEST(Percentile, OneToHundred) {
  std::vector<double> v;
  for (int i = 1; i <= 100; ++i) v.push_back(i);
  EXPECT_DOUBLE_EQ(percentile(v, 50), 50.5);
  EXPECT_DOUBLE_EQ(percentile(v, 90), 90.1);
  EXPECT_DOUBLE_EQ(percentile(v, 99), 99.01);
}

TEST(Summarize, SortsAndSummarizes) {
  const LatencySummary s = summarize({9, 1, 5, 3, 7});
  EXPECT_EQ(s.count, 5u);
  EXPECT_DOUBLE_EQ(s.mean, 5);
  EXPECT_DOUBLE_EQ(s.p50, 5);
  EXPECT_DOUBLE_EQ(s.p90, 8.2);  // rank 3.6: 7 + 0.6 * 2
  EXPECT_DOUBLE_EQ(s.p95, 8.6);
  EXPECT_DOUBLE_EQ(s.p99, 8.92);
  EXPECT_DOUBLE_EQ(s.max, 9);
  EXPECT_EQ(summarize({}).count, 0u);
  EXPECT_THROW(percentile({}, 50), Error);
}

TEST(BatchEfficiency, Arithmetic) {
  EXPECT_DOUBLE_EQ(*batch_efficiency(800, 100, 8), 1.0);  // batch of 8 costs one input
  EXPECT_DOUBLE_EQ(*batch_efficiency(400, 100, 8), 0.5);
  EXPECT_DOUBLE_EQ(*batch_efficiency(100, 100, 8), 0.125);  // batching bought nothing
  EXPECT_DOUBLE_EQ(*batch_efficiency(50, 50, 1), 1.0);
  EXPECT_FALSE(batch_efficiency(0, 100, 8).has_value());
  EXPECT_FALSE(batch_efficiency(100, 0, 8).has_value());
}

TEST(BatchEfficiency, FilledForTheBatchSweepFromItsBatchOneRun) {
  std::vector<RunResult> runs(4);
  const std::size_t sizes[] = {1, 8, 32};
  const double rates[] = {100, 480, 960};
  for (int i = 0; i < 3; ++i) {
    runs[i].spec.kind = "batch";
    runs[i].spec.batch_size = sizes[i];
    runs[i].samples_per_s = rates[i];
  }
  runs[3].spec.kind = "concurrency";
  runs[3].samples_per_s = 300;
  compute_batch_efficiency(runs);
  EXPECT_DOUBLE_EQ(*runs[0].batch_efficiency, 1.0);
  EXPECT_DOUBLE_EQ(*runs[1].batch_efficiency, 0.6);
  EXPECT_DOUBLE_EQ(*runs[2].batch_efficiency, 0.3);
  EXPECT_FALSE(runs[3].batch_efficiency.has_value());
}

TEST(PlanRuns, BatchSweepStartsAtOneThenConcurrencySweep) {
  Workload w;
  w.sweep_batch = {8, 32};
  w.sweep_concurrency = {1, 4};
  w.concurrency = 2;
  w.batch_size = 4;
  const auto plan = plan_runs(w);
  ASSERT_EQ(plan.size(), 5u);
  EXPECT_EQ(plan[0].kind, "batch");
  EXPECT_EQ(plan[0].batch_size, 1u);
  EXPECT_EQ(plan[2].batch_size, 32u);
  EXPECT_EQ(plan[2].concurrency, 2u);
  EXPECT_EQ(plan[3].kind, "concurrency");
  EXPECT_EQ(plan[4].concurrency, 4u);
  EXPECT_EQ(plan[4].batch_size, 4u);
  Workload plain;
  ASSERT_EQ(plan_runs(plain).size(), 1u);
  EXPECT_EQ(plan_runs(plain)[0].kind, "single");
  plain.sweep_batch = {0};
  EXPECT_THROW(plan_runs(plain), Error);
}

}  // namespace
}  // namespace onepass::bench
