// The HTML report: charts drawn from the sweeps of every endpoint, self-contained and offline.
#include "bench/report.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "base/error.h"
#include "bench/results.h"
#include "bench/svg_chart.h"

namespace onepass::bench {
namespace {

using nlohmann::json;

json run(const char* kind, int batch, int conc, double sps, std::optional<double> eff) {
  json r = {{"kind", kind},
            {"batch_size", batch},
            {"concurrency", conc},
            {"request_rate", "inf"},
            {"achieved_rate", 10.0},
            {"requests_per_s", sps / batch},
            {"samples_per_s", sps},
            {"latency_ms",
             {{"mean", 2.0},
              {"p50", 1.5 * conc},
              {"p90", 3.0},
              {"p95", 4.0},
              {"p99", 5.0 * conc},
              {"max", 6.0}}},
            {"errors", {{"total", 0}, {"by_status", json::object()}}},
            {"verified", 10},
            {"mismatches", 0},
            {"accuracy", 0.5},
            {"batch_efficiency", nullptr}};
  if (eff) r["batch_efficiency"] = *eff;
  return r;
}

json result_doc(const std::string& name) {
  return {
      {"schema", kResultSchema},
      {"endpoints",
       json::array(
           {{{"name", name},
             {"dialect", "tei"},
             {"url", "http://x"},
             {"task", "classify"},
             {"runs", json::array({run("batch", 1, 1, 100, 1.0), run("batch", 8, 1, 400, 0.5),
                                   run("concurrency", 1, 1, 100, std::nullopt),
                                   run("concurrency", 1, 4, 300, std::nullopt)})}}})},
      {"agreement",
       json::array({{{"a", "x"}, {"b", "y"}, {"compared", 10}, {"agreeing", 10}, {"rate", 1.0}}})}};
}

TEST(Report, OneSeriesPerEndpointInEveryChart) {
  const std::string html =
      render_report({{"a.json", result_doc("onepass<1>")}, {"b.json", result_doc("tei")}});
  std::size_t svgs = 0;
  for (std::size_t p = html.find("<svg"); p != std::string::npos; p = html.find("<svg", p + 1))
    ++svgs;
  EXPECT_EQ(svgs,
            6u);  // p50, p95, p99, samples/s vs concurrency; samples/s and efficiency vs batch
  std::size_t lines = 0;
  for (std::size_t p = html.find("<polyline"); p != std::string::npos;
       p = html.find("<polyline", p + 1))
    ++lines;
  EXPECT_EQ(lines, 12u);
  EXPECT_NE(html.find("onepass&lt;1&gt;"), std::string::npos);  // names are escaped
  EXPECT_EQ(html.find("onepass<1>"), std::string::npos);
  EXPECT_NE(html.find("10 of 10 samples agree (100.0%)"), std::string::npos);
  // Offline: no scripts, stylesheets or images fetched from anywhere.
  EXPECT_EQ(html.find("<script"), std::string::npos);
  EXPECT_EQ(html.find("<link"), std::string::npos);
  EXPECT_EQ(html.find("https://"), std::string::npos);
}

TEST(Report, SameNameInTwoFilesIsToldApart) {
  const std::string html =
      render_report({{"a.json", result_doc("x")}, {"b.json", result_doc("x")}});
  EXPECT_NE(html.find("x (b.json)"), std::string::npos);
}

TEST(Report, RejectsSomethingElse) {
  EXPECT_THROW(render_report({{"c.json", json{{"schema", "other"}}}}), Error);
}

TEST(SvgChart, NiceSteps) {
  EXPECT_DOUBLE_EQ(nice_step(100, 5), 20);
  EXPECT_DOUBLE_EQ(nice_step(7, 5), 2);
  EXPECT_NEAR(nice_step(0.3, 5), 0.1, 1e-12);
  EXPECT_DOUBLE_EQ(nice_step(0, 5), 1);
}

}  // namespace
}  // namespace onepass::bench
