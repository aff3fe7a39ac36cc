#include "bench/results.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
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

json errors_json(const ErrorCounts& errors,
                 const std::map<std::string, std::string>& messages = {}) {
  json by_status = json::object();
  std::size_t total = 0;
  for (const auto& [key, count] : errors) {
    by_status[key] = count;
    total += count;
  }
  json out = {{"total", total}, {"by_status", by_status}};
  if (!messages.empty()) out["messages"] = messages;
  return out;
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
          {"errors", errors_json(r.errors, r.error_messages)},
          {"throttled", r.throttled},
          {"sdk_retries", r.sdk_retries},
          {"variants", r.variants},
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

// Every endpoint ran the same plan: one row per endpoint under each run, so the deployments
// read side by side (the study's cross-deployment comparison).
void print_side_by_side(const BenchResult& result, std::FILE* out) {
  std::size_t width = 8;
  for (const auto& e : result.endpoints) width = std::max(width, e.spec.name.size());
  fmt::print(out, "\nside by side\n{:>5} {:>5} {:<{}} {:>9} {:>10} {:>8} {:>8} {:>6} {:>9} {:>7}\n",
             "batch", "conc", "endpoint", width, "req/s", "samples/s", "p50 ms", "p99 ms", "eff",
             "throttled", "errors");
  const std::size_t runs = result.endpoints.front().runs.size();
  for (std::size_t i = 0; i < runs; ++i) {
    for (const auto& e : result.endpoints) {
      if (i >= e.runs.size()) continue;
      const RunResult& r = e.runs[i];
      fmt::print(out, "{:>5} {:>5} {:<{}} {:>9.1f} {:>10.1f} {:>8.2f} {:>8.2f} {:>6} {:>9} {:>7}\n",
                 r.spec.batch_size, r.spec.concurrency, e.spec.name, width, r.requests_per_s,
                 r.samples_per_s, r.latency_ms.p50, r.latency_ms.p99,
                 r.batch_efficiency ? fmt::format("{:.2f}", *r.batch_efficiency) : "-", r.throttled,
                 error_summary(r.errors));
    }
  }
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
    json sagemaker = nullptr;
    if (const auto& sm = e.spec.options.sagemaker) {
      std::map<std::string, std::size_t> variants = e.reference.variants;
      for (const auto& r : e.runs) {
        for (const auto& [variant, count] : r.variants) variants[variant] += count;
      }
      sagemaker = {
          {"endpoint_name", sm->endpoint_name}, {"region", sm->region}, {"variants", variants}};
    }
    endpoints.push_back({{"name", e.spec.name},
                         {"sagemaker", std::move(sagemaker)},
                         {"url", e.spec.url},
                         {"dialect", e.spec.dialect},
                         {"model", e.spec.options.model},
                         {"task", task_name(e.reference.answered_task())},
                         {"reference",
                          {{"samples", e.reference.answers.size()},
                           {"answered", answered},
                           {"errors", errors_json(e.reference.errors, e.reference.error_messages)},
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
    if (const auto& sm = e.spec.options.sagemaker) {
      std::map<std::string, std::size_t> variants = e.reference.variants;
      for (const auto& r : e.runs) {
        for (const auto& [variant, count] : r.variants) variants[variant] += count;
      }
      std::string answered_by;
      for (const auto& [variant, count] : variants) {
        answered_by += (answered_by.empty() ? "" : ", ") + fmt::format("{} ({})", variant, count);
      }
      fmt::print(out, "SageMaker endpoint {} in {}, answered by variant {}\n", sm->endpoint_name,
                 sm->region, answered_by.empty() ? "-" : answered_by);
    }
    std::map<std::string, std::string> messages = e.reference.error_messages;
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
      if (r.throttled > 0 || r.sdk_retries > 0) {
        fmt::print(out, "      throttled {} times, {} attempts retried (AWS standard retry mode)\n",
                   r.throttled, r.sdk_retries);
      }
      messages.insert(r.error_messages.begin(), r.error_messages.end());
    }
    for (const auto& [key, message] : messages) fmt::print(out, "{}: {}\n", key, message);
  }
  if (result.endpoints.size() > 1) print_side_by_side(result, out);
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
