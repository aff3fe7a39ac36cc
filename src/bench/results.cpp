#include "bench/results.h"

#include <fmt/format.h>

#include <cmath>
#include <string>

namespace onepass::bench {
namespace {

using nlohmann::json;

// JSON has no infinity: an unbounded rate or burstiness is written as the string "inf".
json number_or_inf(double value) {
  if (std::isinf(value)) return "inf";
  return value;
}

json optional_number(const std::optional<double>& value) {
  if (!value) return nullptr;
  return *value;
}

json errors_json(const ErrorCounts& errors) {
  json by_status = json::object();
  std::size_t total = 0;
  for (const auto& [key, count] : errors) {
    by_status[key] = count;
    total += count;
  }
  return {{"total", total}, {"by_status", by_status}};
}

json run_json(const RunResult& r) {
  const auto& l = r.latency_ms;
  return {{"kind", r.spec.kind},
          {"batch_size", r.spec.batch_size},
          {"concurrency", r.spec.concurrency},
          {"request_rate", number_or_inf(r.spec.arrivals.request_rate)},
          {"burstiness", number_or_inf(r.spec.arrivals.burstiness)},
          {"requests", r.spec.requests},
          {"ok_requests", r.ok_requests},
          {"ok_samples", r.ok_samples},
          {"duration_s", r.duration_s},
          {"requests_per_s", r.requests_per_s},
          {"samples_per_s", r.samples_per_s},
          {"achieved_rate", r.achieved_rate},
          {"latency_ms",
           {{"mean", l.mean},
            {"p50", l.p50},
            {"p90", l.p90},
            {"p95", l.p95},
            {"p99", l.p99},
            {"max", l.max}}},
          {"errors", errors_json(r.errors)},
          {"verified", r.verified},
          {"mismatches", r.mismatches},
          {"retries", r.retries},
          {"accuracy", optional_number(r.accuracy())},
          {"batch_efficiency", optional_number(r.batch_efficiency)}};
}

std::string percent(const std::optional<double>& value) {
  return value ? fmt::format("{:.1f}%", *value * 100) : std::string("-");
}

std::string error_summary(const ErrorCounts& errors) {
  if (errors.empty()) return "0";
  std::string out;
  for (const auto& [key, count] : errors) {
    if (!out.empty()) out += ",";
    out += fmt::format("{}x{}", count, key);
  }
  return out;
}

std::string rate_text(double rate) {
  return std::isinf(rate) ? std::string("inf") : fmt::format("{:.1f}", rate);
}

}  // namespace

json to_json(const BenchResult& result) {
  const Workload& w = result.workload;
  json endpoints = json::array();
  for (const auto& e : result.endpoints) {
    std::size_t answered = 0;
    for (const auto& a : e.reference.answers) answered += a.has_value();
    json runs = json::array();
    for (const auto& r : e.runs) runs.push_back(run_json(r));
    endpoints.push_back({{"name", e.spec.name},
                         {"url", e.spec.url},
                         {"dialect", e.spec.dialect},
                         {"model", e.spec.options.model},
                         {"task", task_name(e.reference.answered_task())},
                         {"reference",
                          {{"samples", e.reference.answers.size()},
                           {"answered", answered},
                           {"errors", errors_json(e.reference.errors)},
                           {"accuracy", optional_number(e.reference.accuracy())}}},
                         {"runs", std::move(runs)}});
  }
  json agreement = json::array();
  for (const auto& a : result.agreement) {
    agreement.push_back({{"a", a.a},
                         {"b", a.b},
                         {"compared", a.compared},
                         {"agreeing", a.agreeing},
                         {"rate", optional_number(a.rate())}});
  }
  return {{"schema", kResultSchema},
          {"workload",
           {{"dataset", w.dataset_name},
            {"samples", w.samples.size()},
            {"pad_to_max", w.pad_to_max},
            {"max_len", w.max_len},
            {"requests", w.requests},
            {"warmup", w.warmup},
            {"batch_size", w.batch_size},
            {"concurrency", w.concurrency},
            {"request_rate", number_or_inf(w.arrivals.request_rate)},
            {"burstiness", number_or_inf(w.arrivals.burstiness)},
            {"task", task_name(w.task)},
            {"seed", w.seed},
            {"timeout_s", std::chrono::duration<double>(w.timeout).count()},
            {"tolerance", w.tolerance}}},
          {"endpoints", std::move(endpoints)},
          {"agreement", std::move(agreement)}};
}

void print_tables(const BenchResult& result, std::FILE* out) {
  for (const auto& e : result.endpoints) {
    std::size_t answered = 0;
    for (const auto& a : e.reference.answers) answered += a.has_value();
    fmt::print(out, "\n== {} ({} dialect, {}) task {}: reference {}/{} answered, accuracy {}\n",
               e.spec.name, e.spec.dialect, e.spec.url, task_name(e.reference.answered_task()),
               answered, e.reference.answers.size(), percent(e.reference.accuracy()));
    std::string kind;
    for (const auto& r : e.runs) {
      if (r.spec.kind != kind) {
        kind = r.spec.kind;
        fmt::print(out, "{} run{}\n", kind, kind == "single" ? "" : "s (sweep)");
        fmt::print(out,
                   "{:>5} {:>5} {:>8} {:>8} {:>9} {:>10} {:>8} {:>8} {:>8} {:>8} {:>8} {:>8} "
                   "{:>6} {:>9} {:>7} {:>8}\n",
                   "batch", "conc", "rate", "achieved", "req/s", "samples/s", "mean ms", "p50",
                   "p90", "p95", "p99", "max", "errors", "mismatch", "acc", "eff");
      }
      const auto& l = r.latency_ms;
      fmt::print(out,
                 "{:>5} {:>5} {:>8} {:>8.1f} {:>9.1f} {:>10.1f} {:>8.2f} {:>8.2f} {:>8.2f} "
                 "{:>8.2f} {:>8.2f} {:>8.2f} {:>6} {:>9} {:>7} {:>8}\n",
                 r.spec.batch_size, r.spec.concurrency, rate_text(r.spec.arrivals.request_rate),
                 r.achieved_rate, r.requests_per_s, r.samples_per_s, l.mean, l.p50, l.p90, l.p95,
                 l.p99, l.max, error_summary(r.errors),
                 fmt::format("{}/{}", r.mismatches, r.verified), percent(r.accuracy()),
                 r.batch_efficiency ? fmt::format("{:.2f}", *r.batch_efficiency) : "-");
    }
  }
  if (!result.agreement.empty()) fmt::print(out, "\n");
  for (const auto& a : result.agreement) {
    fmt::print(out, "agreement {} vs {}: {} of {} samples ({})\n", a.a, a.b, a.agreeing, a.compared,
               percent(a.rate()));
  }
  const std::size_t mismatches = result.mismatches();
  if (mismatches > 0) {
    fmt::print(out,
               "\nCONTENT VERIFICATION FAILED: {} answers differ from the same input's "
               "single-request answer\n",
               mismatches);
  }
}

}  // namespace onepass::bench
