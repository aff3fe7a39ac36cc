#include "bench/report.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>

#include "base/error.h"
#include "bench/results.h"
#include "bench/svg_chart.h"

namespace onepass::bench {
namespace {

using nlohmann::json;

struct Endpoint {
  std::string name;
  json doc;
};

std::optional<double> number_at(const json& run, const std::string& key,
                                const std::string& sub = {}) {
  const json* v = &run;
  if (!v->contains(key)) return std::nullopt;
  v = &(*v)[key];
  if (!sub.empty()) {
    if (!v->is_object() || !v->contains(sub)) return std::nullopt;
    v = &(*v)[sub];
  }
  if (!v->is_number()) return std::nullopt;
  return v->get<double>();
}

// One chart: for runs of `kind`, x = run[x_key], y = run[y_key][y_sub], one series per endpoint.
Chart sweep_chart(const std::vector<Endpoint>& endpoints, const std::string& kind,
                  const std::string& x_key, const std::string& y_key, const std::string& y_sub,
                  const std::string& title, const std::string& x_label,
                  const std::string& y_label) {
  Chart chart;
  chart.title = title;
  chart.x_label = x_label;
  chart.y_label = y_label;
  std::set<std::size_t> xs;
  for (const auto& e : endpoints) {
    for (const auto& run : e.doc["runs"]) {
      if (run.value("kind", "") == kind) xs.insert(run.value(x_key, std::size_t{0}));
    }
  }
  for (std::size_t x : xs) chart.x_ticks.push_back(std::to_string(x));
  for (const auto& e : endpoints) {
    ChartSeries series{e.name, std::vector<std::optional<double>>(xs.size())};
    bool any = false;
    for (const auto& run : e.doc["runs"]) {
      if (run.value("kind", "") != kind) continue;
      const auto index = static_cast<std::size_t>(
          std::distance(xs.begin(), xs.find(run.value(x_key, std::size_t{0}))));
      series.y[index] = number_at(run, y_key, y_sub);
      any = any || series.y[index].has_value();
    }
    if (any) chart.series.push_back(std::move(series));
  }
  return chart;
}

std::string cell(const json& v, const char* format = "{:.2f}") {
  if (v.is_number_float()) return fmt::format(fmt::runtime(format), v.get<double>());
  if (v.is_number()) return std::to_string(v.get<long long>());
  if (v.is_string()) return html_escape(v.get<std::string>());
  return "-";
}

std::string runs_table(const Endpoint& e) {
  std::string html = fmt::format(
      "<h3>{} <small>({} dialect, {}, task {})</small></h3>\n<table>\n<tr><th>kind</th><th>batch"
      "</th><th>conc</th><th>rate</th><th>achieved</th><th>req/s</th><th>samples/s</th><th>mean "
      "ms</th><th>p50</th><th>p90</th><th>p95</th><th>p99</th><th>max</th><th>errors</th>"
      "<th>mismatches</th><th>accuracy</th><th>efficiency</th></tr>\n",
      html_escape(e.name), html_escape(e.doc.value("dialect", "")),
      html_escape(e.doc.value("url", "")), html_escape(e.doc.value("task", "")));
  for (const auto& r : e.doc["runs"]) {
    const json& l = r["latency_ms"];
    html += fmt::format(
        "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}"
        "</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}/{}</td>"
        "<td>{}</td><td>{}</td></tr>\n",
        cell(r["kind"]), cell(r["batch_size"]), cell(r["concurrency"]),
        cell(r["request_rate"], "{:.1f}"), cell(r["achieved_rate"], "{:.1f}"),
        cell(r["requests_per_s"], "{:.1f}"), cell(r["samples_per_s"], "{:.1f}"), cell(l["mean"]),
        cell(l["p50"]), cell(l["p90"]), cell(l["p95"]), cell(l["p99"]), cell(l["max"]),
        cell(r["errors"]["total"]), cell(r["mismatches"]), cell(r["verified"]),
        cell(r["accuracy"], "{:.3f}"), cell(r["batch_efficiency"], "{:.3f}"));
  }
  return html + "</table>\n";
}

}  // namespace

std::string render_report(const std::vector<std::pair<std::string, json>>& results) {
  std::vector<Endpoint> endpoints;
  std::set<std::string> names;
  std::string agreement;
  for (const auto& [label, doc] : results) {
    if (!doc.is_object() || doc.value("schema", "") != kResultSchema ||
        !doc.contains("endpoints")) {
      throw Error(ErrorKind::kInvalidInput, label + " is not an onepass bench result");
    }
    for (const auto& e : doc["endpoints"]) {
      if (!e.is_object() || !e.contains("runs") || !e["runs"].is_array()) {
        throw Error(ErrorKind::kInvalidInput, label + " has an endpoint without runs");
      }
      std::string name = e.value("name", "endpoint");
      if (!names.insert(name).second) name += " (" + label + ")";
      names.insert(name);
      endpoints.push_back({name, e});
    }
    for (const auto& a : doc.value("agreement", json::array())) {
      agreement += fmt::format(
          "<li>{} vs {}: {} of {} samples agree ({})</li>\n", html_escape(a.value("a", "")),
          html_escape(a.value("b", "")), cell(a["agreeing"]), cell(a["compared"]),
          a["rate"].is_number() ? fmt::format("{:.1f}%", a["rate"].get<double>() * 100)
                                : std::string("-"));
    }
  }

  std::string charts;
  for (const char* p : {"p50", "p95", "p99"}) {
    Chart c = sweep_chart(endpoints, "concurrency", "concurrency", "latency_ms", p,
                          fmt::format("{} latency vs concurrency", p), "concurrency", "ms");
    if (!c.series.empty()) charts += render_svg(c);
  }
  Chart throughput = sweep_chart(endpoints, "concurrency", "concurrency", "samples_per_s", "",
                                 "samples/s vs concurrency", "concurrency", "samples/s");
  if (!throughput.series.empty()) charts += render_svg(throughput);
  Chart samples = sweep_chart(endpoints, "batch", "batch_size", "samples_per_s", "",
                              "samples/s vs batch size", "batch size", "samples/s");
  if (!samples.series.empty()) charts += render_svg(samples);
  Chart efficiency = sweep_chart(endpoints, "batch", "batch_size", "batch_efficiency", "",
                                 "batch efficiency vs batch size", "batch size",
                                 "samples/s(N) / samples/s(1) / N");
  if (!efficiency.series.empty()) charts += render_svg(efficiency);
  if (charts.empty())
    charts = "<p>No sweep in these results: run with --sweep-batch or --sweep-concurrency.</p>\n";

  std::string tables;
  for (const auto& e : endpoints) tables += runs_table(e);
  std::string html =
      "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>onepass bench report</title>\n"
      "<style>body{font-family:sans-serif;margin:24px;color:#222}svg{margin:8px;border:1px solid "
      "#eee}table{border-collapse:collapse;font-size:12px;margin-bottom:16px}td,th{border:1px "
      "solid #ccc;padding:3px 6px;text-align:right}th{background:#f4f4f4}</style></head><body>\n"
      "<h1>onepass bench report</h1>\n<p>Latency is end to end, from each request's intended send "
      "time. Batch efficiency = samples/s at batch N / samples/s at batch 1 / N.</p>\n<div>\n";
  html += charts + "</div>\n";
  if (!agreement.empty()) html += "<h2>Agreement</h2>\n<ul>\n" + agreement + "</ul>\n";
  html += "<h2>Runs</h2>\n" + tables + "</body></html>\n";
  return html;
}

void write_report(const std::vector<std::string>& inputs, const std::string& output) {
  std::vector<std::pair<std::string, json>> results;
  for (const auto& path : inputs) {
    const std::string label = std::filesystem::path(path).filename().string();
    std::ifstream in(path);
    if (!in) throw Error(ErrorKind::kNotFound, "cannot open " + label);
    json doc = json::parse(in, nullptr, /*allow_exceptions=*/false);
    if (doc.is_discarded()) throw Error(ErrorKind::kInvalidInput, label + " is not JSON");
    results.emplace_back(label, std::move(doc));
  }
  const std::string html = render_report(results);
  std::ofstream out(output);
  if (!out) throw Error(ErrorKind::kInvalidArgument, "cannot write the report file");
  out << html;
}

}  // namespace onepass::bench
