// The bench end to end against loopback test doubles: every dialect against a server that answers
// like onepass, error counting, latency from the intended send time, agreement in compare mode,
// and a deliberately wrong server (answers swapped between concurrent requests) that must be
// caught by the content verification.
#include <gtest/gtest.h>

#include <condition_variable>
#include <mutex>
#include <thread>

#include "bench/bench.h"
#include "bench/results.h"
#include "fake_server.h"

namespace onepass::bench::testing {
namespace {

using namespace std::chrono_literals;

Workload small_workload() {
  Workload w;
  w.dataset_name = "default";
  w.samples = default_dataset();
  w.requests = 24;
  w.warmup = 2;
  w.seed = 7;
  w.timeout = 10000ms;
  return w;
}

EndpointSpec endpoint(const std::string& name, const FakeServer& server,
                      const std::string& dialect) {
  EndpointSpec e;
  e.name = name;
  e.url = server.url();
  e.dialect = dialect;
  e.options.model = "fake";
  e.options.label_names = {kFakeLabels[0], kFakeLabels[1], kFakeLabels[2]};
  return e;
}

// Accuracy the fake model must reach on the first `count` samples, computed independently.
double expected_accuracy(const std::vector<Sample>& samples, std::size_t count) {
  std::size_t correct = 0;
  for (std::size_t i = 0; i < count; ++i) correct += fake_label(samples[i]) == *samples[i].label;
  return static_cast<double>(correct) / static_cast<double>(count);
}

struct DialectCase {
  const char* dialect;
  bool embedder;
  Task expected_task;
};

class EveryDialect : public ::testing::TestWithParam<DialectCase> {};

TEST_P(EveryDialect, SweepsVerifyEveryAnswerAndReportAccuracy) {
  const DialectCase c = GetParam();
  FakeServer server([&](const FakeRequest& r) { return answer_like_onepass(r, c.embedder); });
  Workload w = small_workload();
  w.sweep_batch = {4};
  w.sweep_concurrency = {1, 4};
  const BenchResult result = run_bench({endpoint("fake", server, c.dialect)}, w);
  ASSERT_EQ(result.endpoints.size(), 1u);
  const EndpointResult& e = result.endpoints[0];
  EXPECT_EQ(e.reference.task, c.expected_task);
  EXPECT_EQ(e.reference.answered_task(), c.embedder ? Task::kEmbed : Task::kClassify);
  // The reference covers what the largest run sends: (24 + 2) * 4 = 104 > 84 samples.
  EXPECT_EQ(e.reference.answers.size(), w.samples.size());
  EXPECT_TRUE(e.reference.errors.empty());
  ASSERT_EQ(e.runs.size(), 4u);  // batch 1, 4; concurrency 1, 4
  for (const RunResult& r : e.runs) {
    EXPECT_TRUE(r.errors.empty()) << c.dialect;
    EXPECT_EQ(r.ok_requests, 24u);
    EXPECT_EQ(r.ok_samples, 24u * r.spec.batch_size);
    EXPECT_EQ(r.verified, r.ok_samples);
    EXPECT_EQ(r.mismatches, 0u);
    EXPECT_EQ(r.latency_ms.count, 24u);
    EXPECT_GT(r.samples_per_s, 0);
  }
  ASSERT_TRUE(e.runs[0].batch_efficiency.has_value());
  ASSERT_TRUE(e.runs[1].batch_efficiency.has_value());
  EXPECT_DOUBLE_EQ(*e.runs[0].batch_efficiency, 1.0);
  if (!c.embedder) {
    ASSERT_TRUE(e.reference.accuracy().has_value());
    ASSERT_TRUE(e.runs[0].accuracy().has_value());
    EXPECT_DOUBLE_EQ(*e.reference.accuracy(), expected_accuracy(w.samples, w.samples.size()));
    // Batch 1 at concurrency 1 sends samples 0..23.
    EXPECT_DOUBLE_EQ(*e.runs[0].accuracy(), expected_accuracy(w.samples, 24));
  }
  // The server saw the reference pass, the warmups and every run's requests, nothing more.
  std::size_t expected_requests = e.reference.answers.size() + 4 * (24 + 2);
  if (c.expected_task == Task::kEmbed && c.dialect != std::string("onepass") &&
      c.dialect != std::string("triton") && c.dialect != std::string("openai")) {
    ++expected_requests;  // auto-detection tried the classify route once
  }
  EXPECT_EQ(server.requests(), expected_requests);
}

INSTANTIATE_TEST_SUITE_P(Dialects, EveryDialect,
                         ::testing::Values(DialectCase{"onepass", false, Task::kClassify},
                                           DialectCase{"hf", true, Task::kClassify},
                                           DialectCase{"tei", false, Task::kClassify},
                                           DialectCase{"tei", true, Task::kEmbed},
                                           DialectCase{"triton", false, Task::kClassify},
                                           DialectCase{"triton", true, Task::kClassify},
                                           DialectCase{"vllm", false, Task::kClassify},
                                           DialectCase{"vllm", true, Task::kEmbed},
                                           DialectCase{"openai", true, Task::kEmbed}),
                         [](const auto& info) {
                           return std::string(info.param.dialect) +
                                  (info.param.embedder ? "_embedder" : "_classifier");
                         });

TEST(Verification, SwappedAnswersAreCaught) {
  SwapPairs swap([](const FakeRequest& r) { return answer_like_onepass(r, false); });
  FakeServer server([&](const FakeRequest& r) { return swap(r); });
  Workload w = small_workload();
  // Every sequential request waits SwapPairs' 30 ms for a partner: few requests keep it short.
  w.requests = 16;
  w.warmup = 0;
  w.sweep_concurrency = {1, 4};
  const BenchResult result = run_bench({endpoint("wrong", server, "onepass")}, w);
  const auto& runs = result.endpoints[0].runs;
  // Sequential requests never overlap, so the reference and the concurrency-1 run are right...
  EXPECT_TRUE(result.endpoints[0].reference.errors.empty());
  EXPECT_EQ(runs[0].mismatches, 0u);
  // ...and under concurrency the swapped answers are found (a swap of two inputs with the same
  // answer would be harmless, but no two of the dataset's inputs share one).
  ASSERT_GT(swap.swapped(), 0u);
  EXPECT_GT(runs[1].mismatches, 0u);
  EXPECT_LE(runs[1].mismatches, swap.swapped());
  EXPECT_EQ(result.mismatches(), runs[1].mismatches);
  const auto doc = to_json(result);
  EXPECT_EQ(doc["endpoints"][0]["runs"][1]["mismatches"], runs[1].mismatches);
}

TEST(Compare, TwoServersOfTheSameModelAgreeAndADifferentOneDoesNot) {
  FakeServer a([](const FakeRequest& r) { return answer_like_onepass(r, false); });
  FakeServer b([](const FakeRequest& r) { return answer_like_onepass(r, false); });
  // A different "model": the hypothesis is ignored.
  FakeServer c([](const FakeRequest& r) {
    FakeRequest copy = r;
    auto body = nlohmann::json::parse(r.body);
    for (auto& item : body["inputs"]) item.erase("text_pair");
    copy.body = body.dump();
    return answer_like_onepass(copy, false);
  });
  Workload w = small_workload();
  w.requests = 8;
  const BenchResult result = run_bench(
      {endpoint("a", a, "onepass"), endpoint("b", b, "tei"), endpoint("c", c, "onepass")}, w);
  ASSERT_EQ(result.agreement.size(), 3u);
  EXPECT_EQ(result.agreement[0].a, "a");
  EXPECT_EQ(result.agreement[0].b, "b");
  EXPECT_EQ(result.agreement[0].compared, 10u);  // (8 + 2) requests of one sample
  EXPECT_DOUBLE_EQ(*result.agreement[0].rate(), 1.0);
  EXPECT_LT(*result.agreement[1].rate(), 1.0);  // a vs c
}

TEST(Load, ErrorsAreCountedByStatus) {
  std::atomic<int> n{0};
  FakeServer server([&](const FakeRequest& r) {
    // The reference pass (10 requests) and warmups (2) pass; then every third request fails.
    const int i = n++;
    if (i >= 12 && (i - 12) % 3 == 2) return FakeResponse{503, "{\"error\":\"busy\"}"};
    return answer_like_onepass(r, false);
  });
  Workload w = small_workload();
  w.requests = 30;
  w.samples.resize(10);
  const BenchResult result = run_bench({endpoint("flaky", server, "onepass")}, w);
  const RunResult& r = result.endpoints[0].runs[0];
  EXPECT_EQ(r.errors.at("503"), 10u);
  EXPECT_EQ(r.ok_requests, 20u);
  EXPECT_EQ(r.latency_ms.count, 20u);
  EXPECT_EQ(to_json(result)["endpoints"][0]["runs"][0]["errors"]["by_status"]["503"], 10);
}

TEST(Load, LatencyIsMeasuredFromTheIntendedSendTime) {
  // The server takes >= 20 ms; requests are due every 5 ms (fixed interval) on one connection.
  // Request i cannot start before 20*i ms but was due at 5*i ms, so its latency is at least
  // 20*(i+1) - 5*i ms: the last of 10 is >= 155 ms. A closed-loop tool would report ~20 ms.
  FakeServer server([](const FakeRequest& r) {
    std::this_thread::sleep_for(20ms);
    return answer_like_onepass(r, false);
  });
  Workload w = small_workload();
  w.requests = 10;
  w.warmup = 0;
  w.arrivals = {200.0, std::numeric_limits<double>::infinity()};
  const BenchResult result = run_bench({endpoint("slow", server, "onepass")}, w);
  const RunResult& r = result.endpoints[0].runs[0];
  EXPECT_GE(r.latency_ms.max, 155.0);
  EXPECT_GE(r.latency_ms.p50, 20.0 * 5 - 5.0 * 4);  // the 5th request's lower bound
  EXPECT_LT(r.achieved_rate, 200.0);                // the cap held the rate down
}

TEST(Load, UnreachableEndpointStopsTheBench) {
  Workload w = small_workload();
  EndpointSpec e;
  e.name = "nothing";
  e.url = "http://127.0.0.1:1";
  EXPECT_THROW(run_bench({e}, w), Error);
}

}  // namespace
}  // namespace onepass::bench::testing

namespace onepass::bench::testing {
namespace {

using namespace std::chrono_literals;

TEST(Load, SixtyFourRequestsInFlight) {
  // Each answer waits (up to 200 ms) until 64 requests have been inside the server at once: the
  // count only reaches 64 if the generator really keeps 64 requests in flight.
  std::mutex mutex;
  std::condition_variable cv;
  int inside = 0, most = 0;
  FakeServer server([&](const FakeRequest& r) {
    std::unique_lock lock(mutex);
    most = std::max(most, ++inside);
    cv.notify_all();
    cv.wait_for(lock, 200ms, [&] { return most >= 64; });
    --inside;
    lock.unlock();
    return answer_like_onepass(r, false);
  });
  Workload w = small_workload();
  w.requests = 256;
  w.warmup = 0;
  w.samples.resize(8);
  w.sweep_concurrency = {64};
  const BenchResult result = run_bench({endpoint("wide", server, "onepass")}, w);
  const RunResult& r = result.endpoints[0].runs[0];
  EXPECT_TRUE(r.errors.empty());
  EXPECT_EQ(r.ok_requests, 256u);
  EXPECT_EQ(r.mismatches, 0u);
  EXPECT_EQ(most, 64);
}

}  // namespace
}  // namespace onepass::bench::testing
