#include "bench/bench.h"

#include <algorithm>

#include "base/error.h"

namespace onepass::bench {

std::optional<double> Agreement::rate() const {
  if (compared == 0) return std::nullopt;
  return static_cast<double>(agreeing) / static_cast<double>(compared);
}

std::size_t BenchResult::mismatches() const {
  std::size_t total = 0;
  for (const auto& e : endpoints) {
    for (const auto& r : e.runs) total += r.mismatches;
  }
  return total;
}

std::vector<RunSpec> plan_runs(const Workload& workload) {
  auto positive = [](const std::vector<std::size_t>& values, const char* flag) {
    for (std::size_t v : values) {
      if (v == 0)
        throw Error(ErrorKind::kInvalidArgument, std::string(flag) + " values must be >= 1");
    }
  };
  positive(workload.sweep_batch, "--sweep-batch");
  positive(workload.sweep_concurrency, "--sweep-concurrency");
  positive({workload.batch_size, workload.concurrency, workload.requests},
           "-n, --batch-size, --concurrency");
  validate(workload.arrivals);

  RunSpec base;
  base.requests = workload.requests;
  base.warmup = workload.warmup;
  base.batch_size = workload.batch_size;
  base.concurrency = workload.concurrency;
  base.arrivals = workload.arrivals;
  base.seed = workload.seed;
  base.timeout = workload.timeout;
  base.tolerance = workload.tolerance;

  std::vector<RunSpec> runs;
  if (!workload.sweep_batch.empty()) {
    std::vector<std::size_t> sizes = workload.sweep_batch;
    if (std::find(sizes.begin(), sizes.end(), 1) == sizes.end()) sizes.insert(sizes.begin(), 1);
    for (std::size_t b : sizes) {
      RunSpec spec = base;
      spec.kind = "batch";
      spec.batch_size = b;
      runs.push_back(spec);
    }
  }
  for (std::size_t c : workload.sweep_concurrency) {
    RunSpec spec = base;
    spec.kind = "concurrency";
    spec.concurrency = c;
    runs.push_back(spec);
  }
  if (runs.empty()) runs.push_back(base);
  return runs;
}

void compute_batch_efficiency(std::vector<RunResult>& runs) {
  const RunResult* one = nullptr;
  for (const auto& r : runs) {
    if (r.spec.kind == "batch" && r.spec.batch_size == 1) one = &r;
  }
  if (one == nullptr) return;
  const double base = one->samples_per_s;
  for (auto& r : runs) {
    if (r.spec.kind == "batch") {
      r.batch_efficiency = batch_efficiency(r.samples_per_s, base, r.spec.batch_size);
    }
  }
}

BenchResult run_bench(const std::vector<EndpointSpec>& endpoints, const Workload& workload,
                      const RunProgressFn& progress) {
  if (endpoints.empty()) throw Error(ErrorKind::kInvalidArgument, "no --endpoint given");
  if (workload.samples.empty()) throw Error(ErrorKind::kInvalidArgument, "the dataset is empty");
  const std::vector<RunSpec> plan = plan_runs(workload);
  // The reference covers every sample some run will send, and no more.
  std::size_t used = 0;
  for (const auto& spec : plan) {
    used = std::max(used, (spec.requests + spec.warmup) * spec.batch_size);
  }
  used = std::min(used, workload.samples.size());

  BenchResult result;
  result.workload = workload;
  for (const auto& endpoint : endpoints) {
    const std::string& url = endpoint.url;
    const auto dialect = make_dialect(endpoint.dialect, endpoint.options);
    EndpointResult er;
    er.spec = endpoint;
    er.reference =
        reference_pass(*dialect, url, workload.samples, used, workload.task, workload.timeout);
    for (const auto& spec : plan) {
      ProgressFn run_progress;
      if (progress) {
        run_progress = [&](std::size_t done, std::size_t total) {
          progress(endpoint.name, spec, done, total);
        };
      }
      er.runs.push_back(
          run_load(*dialect, url, workload.samples, er.reference, spec, run_progress));
    }
    compute_batch_efficiency(er.runs);
    result.endpoints.push_back(std::move(er));
  }
  for (std::size_t i = 0; i < result.endpoints.size(); ++i) {
    for (std::size_t j = i + 1; j < result.endpoints.size(); ++j) {
      const auto& a = result.endpoints[i];
      const auto& b = result.endpoints[j];
      Agreement agreement{a.spec.name, b.spec.name};
      const std::size_t count = std::min(a.reference.answers.size(), b.reference.answers.size());
      for (std::size_t k = 0; k < count; ++k) {
        if (!a.reference.answers[k] || !b.reference.answers[k]) continue;
        ++agreement.compared;
        agreement.agreeing +=
            answers_agree(*a.reference.answers[k], *b.reference.answers[k], workload.tolerance);
      }
      result.agreement.push_back(agreement);
    }
  }
  return result;
}

}  // namespace onepass::bench
