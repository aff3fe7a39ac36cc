// One benchmark session: for each endpoint, a reference pass, then the runs the workload asks for
// (one run, a batch sweep, a concurrency sweep), then the agreement between endpoints. The
// result is a plain structure that results.h writes as JSON and as tables.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "bench/dialect.h"
#include "bench/load.h"

namespace onepass::bench {

struct EndpointSpec {
  std::string name;  // "default" for `onepass bench --endpoint URL`
  std::string url;
  std::string dialect = "onepass";
  DialectOptions options;
};

struct Workload {
  std::string dataset_name;     // "default" or the file name
  std::vector<Sample> samples;  // already lengthened when pad_to_max
  bool pad_to_max = false;
  std::size_t max_len = 512;
  std::size_t requests = 100;
  std::size_t warmup = 3;
  std::size_t batch_size = 1;
  std::size_t concurrency = 1;
  ArrivalProcess arrivals{std::numeric_limits<double>::infinity(), 1.0};
  std::vector<std::size_t> sweep_batch;        // empty: no batch sweep
  std::vector<std::size_t> sweep_concurrency;  // empty: no concurrency sweep
  Task task = Task::kAuto;
  std::uint64_t seed = 0;
  std::chrono::milliseconds timeout{30000};
  double tolerance = 1e-3;
};

struct EndpointResult {
  EndpointSpec spec;
  Reference reference;
  std::vector<RunResult> runs;
};

struct Agreement {
  std::string a, b;
  std::size_t compared = 0, agreeing = 0;
  std::optional<double> rate() const;
};

struct BenchResult {
  Workload workload;
  std::vector<EndpointResult> endpoints;
  std::vector<Agreement> agreement;  // every pair of endpoints, in order
  std::size_t mismatches() const;    // over every run of every endpoint
};

// The runs a workload asks for: the batch sweep (1 is added first when missing: efficiency is
// relative to it) at the workload's concurrency, then the concurrency sweep at its batch size;
// a single run when neither sweep is given. Throws kInvalidArgument for a zero size.
std::vector<RunSpec> plan_runs(const Workload& workload);

// Progress callback for a run: (endpoint name, run spec, done, total).
using RunProgressFn =
    std::function<void(const std::string&, const RunSpec&, std::size_t, std::size_t)>;

BenchResult run_bench(const std::vector<EndpointSpec>& endpoints, const Workload& workload,
                      const RunProgressFn& progress = {});

// Fills RunResult::batch_efficiency of the "batch" runs from their batch-1 run.
void compute_batch_efficiency(std::vector<RunResult>& runs);

}  // namespace onepass::bench
