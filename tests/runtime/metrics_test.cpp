#include "runtime/metrics.h"

#include <gtest/gtest.h>

#include <cmath>

#include "prometheus_check.h"

namespace onepass::runtime {
namespace {

using namespace std::chrono_literals;
using testing::check_prometheus_text;
using testing::Sample;
using testing::sample_value;

std::string join(const std::vector<std::string>& v) {
  std::string out;
  for (auto& s : v) out += s + "\n";
  return out;
}

TEST(PrometheusCheck, CatchesBrokenTexts) {
  EXPECT_FALSE(check_prometheus_text("x_total 1\n").empty());  // no TYPE
  EXPECT_FALSE(check_prometheus_text("# HELP a_total h\n# TYPE a_total counter\na_total{l=\"x} 1\n")
                   .empty());
  const std::string bad_hist =
      "# HELP h x\n# TYPE h histogram\nh_bucket{le=\"1\"} 3\nh_bucket{le=\"+Inf\"} 2\n"
      "h_sum 1\nh_count 2\n";
  EXPECT_FALSE(check_prometheus_text(bad_hist).empty());
  const std::string good_hist =
      "# HELP h x\n# TYPE h histogram\nh_bucket{le=\"1\"} 1\nh_bucket{le=\"+Inf\"} 2\n"
      "h_sum 3.5\nh_count 2\n";
  EXPECT_TRUE(check_prometheus_text(good_hist).empty()) << join(check_prometheus_text(good_hist));
}

TEST(Metrics, EmptyRenderIsValidAndListsEveryFamily) {
  Metrics metrics;
  const std::string text = metrics.render(RuntimeGauges{});
  EXPECT_TRUE(check_prometheus_text(text).empty()) << join(check_prometheus_text(text)) << text;
  for (const char* family :
       {"onepass_requests_total", "onepass_inputs_total", "onepass_tokens_total",
        "onepass_request_duration_seconds", "onepass_request_queue_duration_seconds",
        "onepass_request_tokenization_duration_seconds",
        "onepass_request_inference_duration_seconds", "onepass_batch_size_inputs",
        "onepass_batch_size_tokens", "onepass_queue_depth", "onepass_inflight_requests",
        "onepass_loaded_models", "onepass_model_failed", "onepass_model_load_seconds"}) {
    EXPECT_NE(text.find(std::string("# TYPE ") + family + " "), std::string::npos) << family;
  }
}

TEST(Metrics, CountsAndHistogramsMatchWhatWasRecorded) {
  Metrics metrics;
  metrics.record_http_request("/predict", "nli", 200, 3ms);
  metrics.record_http_request("/predict", "nli", 200, 7ms);
  metrics.record_http_request("/predict", "nli", 429, 1ms);
  metrics.record_http_request("/embed", "we\"ird\\name\n", 200, 1ms);

  InferenceTimings timings;
  timings.total = 20ms;
  timings.queue = 2ms;
  timings.tokenization = 1ms;
  timings.inference = 15ms;
  metrics.record_request("nli", 3, 40, timings, true);
  metrics.record_request("nli", 1, 10, timings, true);
  metrics.record_request("nli", 2, 0, timings, false);
  metrics.record_batch("nli", 4, 50);
  metrics.record_batch("nli", 1, 600);

  RuntimeGauges gauges;
  gauges.in_flight_requests = 5;
  ModelGauges nli;
  nli.model = "nli";
  nli.queue_depth = 7;
  nli.batch_queue_depth = 5;
  nli.loaded = true;
  nli.load_seconds = 0.25;
  ModelGauges embed;
  embed.model = "embed";
  gauges.models = {nli, embed};
  const std::string text = metrics.render(gauges);
  std::vector<Sample> s;
  const auto problems = check_prometheus_text(text, &s);
  ASSERT_TRUE(problems.empty()) << join(problems) << text;

  EXPECT_EQ(sample_value(s, "onepass_requests_total",
                         {{"route", "/predict"}, {"model", "nli"}, {"status", "200"}}),
            2);
  EXPECT_EQ(sample_value(s, "onepass_requests_total", {{"status", "429"}}), 1);
  EXPECT_EQ(sample_value(s, "onepass_requests_total", {{"model", "we\"ird\\name\n"}}), 1);
  EXPECT_EQ(sample_value(s, "onepass_inputs_total", {{"model", "nli"}}), 4);
  EXPECT_EQ(sample_value(s, "onepass_tokens_total", {{"model", "nli"}}), 50);
  EXPECT_EQ(sample_value(s, "onepass_failed_requests_total", {{"model", "nli"}}), 1);
  // Three requests ended (two served, one failed): all have a total duration.
  EXPECT_EQ(sample_value(s, "onepass_request_duration_seconds_count", {{"model", "nli"}}), 3);
  EXPECT_EQ(sample_value(s, "onepass_request_queue_duration_seconds_count", {{"model", "nli"}}), 2);
  EXPECT_NEAR(sample_value(s, "onepass_request_inference_duration_seconds_sum", {{"model", "nli"}}),
              0.030, 1e-12);
  // 15 ms falls in (0.01, 0.025].
  EXPECT_EQ(sample_value(s, "onepass_request_inference_duration_seconds_bucket",
                         {{"model", "nli"}, {"le", "0.01"}}),
            0);
  EXPECT_EQ(sample_value(s, "onepass_request_inference_duration_seconds_bucket",
                         {{"model", "nli"}, {"le", "0.025"}}),
            2);
  EXPECT_EQ(sample_value(s, "onepass_batch_size_inputs_bucket", {{"model", "nli"}, {"le", "1"}}),
            1);
  EXPECT_EQ(sample_value(s, "onepass_batch_size_inputs_bucket", {{"model", "nli"}, {"le", "4"}}),
            2);
  EXPECT_EQ(sample_value(s, "onepass_batch_size_tokens_bucket", {{"model", "nli"}, {"le", "512"}}),
            1);
  EXPECT_EQ(sample_value(s, "onepass_batch_size_tokens_sum", {{"model", "nli"}}), 650);
  EXPECT_EQ(sample_value(s, "onepass_queue_depth", {{"model", "nli"}}), 7);
  EXPECT_EQ(sample_value(s, "onepass_batch_queue_depth", {{"model", "nli"}}), 5);
  EXPECT_EQ(sample_value(s, "onepass_queue_depth", {{"model", "embed"}}), 0);
  EXPECT_EQ(sample_value(s, "onepass_inflight_requests"), 5);
  EXPECT_EQ(sample_value(s, "onepass_loaded_models"), 1);
  EXPECT_EQ(sample_value(s, "onepass_model_load_seconds", {{"model", "nli"}}), 0.25);
  EXPECT_EQ(sample_value(s, "onepass_http_request_duration_seconds_count", {{"route", "/predict"}}),
            3);
}

}  // namespace
}  // namespace onepass::runtime
