// The load generator. A reference pass sends every sample alone, one at a time, and keeps the
// answers; a run then sends `requests` requests of `batch_size` samples on an open-loop
// schedule (arrivals.h) through at most `concurrency` keep-alive connections, and checks every
// answer against the reference, so a server that swaps or duplicates answers under load is
// caught.
//
// Latency runs from the request's INTENDED send time to the last byte of its answer: when the
// server (or the concurrency cap) falls behind the schedule, the wait is part of the latency
// (no coordinated omission). At an infinite rate there is no schedule: a request is due when a
// connection frees up, so latency runs from the actual send.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "bench/answer.h"
#include "bench/arrivals.h"
#include "bench/dataset.h"
#include "bench/dialect.h"
#include "bench/stats.h"
#include "http/client.h"

namespace onepass::bench {

// Error counts keyed by HTTP status ("503"), gRPC status name ("UNAVAILABLE") or transport
// failure ("timeout", "connect", "io", "protocol"); "bad_response" for a success the dialect
// cannot read (transport.h).
using ErrorCounts = std::map<std::string, std::size_t>;

struct Reference {
  Task task = Task::kClassify;                 // what the endpoint turned out to answer
  std::vector<std::optional<Answer>> answers;  // per sample; empty where the request failed
  ErrorCounts errors;
  std::map<std::string, std::string> error_messages;  // error key -> the first answer's words
  std::map<std::string, std::size_t> variants;        // SageMaker production variant -> answers
  std::size_t labelled = 0, correct = 0;              // accuracy against the dataset's labels
  std::optional<double> accuracy() const;
  // What the answers are, whatever was asked: kEmbed when they carry no label (an embedder
  // behind a route that serves both, like /invocations or KServe).
  Task answered_task() const;
};

// Sends samples[0..count) one per request. With Task::kAuto, tries the dialect's tasks in order
// on the first sample and keeps the first that answers 2xx. Throws Error(kUnavailable) when no
// sample gets an answer at all (a wrong URL should stop the bench, not produce a table of zeros),
// and Error(kInvalidArgument) with SageMaker's reason when it refuses the caller
// (sagemaker_runtime.h).
// `url`: http[s]://... or, for a gRPC dialect, grpc://HOST:PORT (transport.h).
Reference reference_pass(const Dialect& dialect, const std::string& url,
                         const std::vector<Sample>& samples, std::size_t count, Task task,
                         std::chrono::milliseconds timeout);

struct RunSpec {
  std::string kind = "single";  // "single" | "batch" | "concurrency": which sweep it belongs to
  std::size_t requests = 100;
  std::size_t warmup = 3;
  std::size_t batch_size = 1;
  std::size_t concurrency = 1;
  ArrivalProcess arrivals{std::numeric_limits<double>::infinity(), 1.0};
  std::uint64_t seed = 0;
  std::chrono::milliseconds timeout{30000};
  double tolerance = 1e-3;
};

struct RunResult {
  RunSpec spec;
  double duration_s = 0;
  std::size_t ok_requests = 0, ok_samples = 0;
  double requests_per_s = 0, samples_per_s = 0;
  double achieved_rate = 0;  // requests actually sent per second (first to last send)
  LatencySummary latency_ms;
  ErrorCounts errors;
  std::map<std::string, std::string> error_messages;  // error key -> the first answer's words
  std::map<std::string, std::size_t> variants;        // SageMaker production variant -> answers
  std::size_t throttled = 0;                 // SageMaker throttling answers, retried or not
  std::size_t sdk_retries = 0;               // attempts resent by the AWS standard retry mode
  std::size_t verified = 0, mismatches = 0;  // samples checked against the reference
  std::size_t retries = 0;  // requests sent twice because a reused connection failed (client.h)
  std::size_t labelled = 0, correct = 0;
  std::optional<double> accuracy() const;
  std::optional<double> batch_efficiency;  // filled by the batch sweep
};

// Called from the load generator's own thread with (done, total) requests.
using ProgressFn = std::function<void(std::size_t done, std::size_t total)>;

// Request i carries samples (i*batch_size + k) mod samples.size(); samples must be non-empty
// and reference.answers must cover the ones that are checked. Throws Error(kInvalidArgument) with
// SageMaker's reason, once the requests in flight end, when SageMaker refuses the caller.
RunResult run_load(const Dialect& dialect, const std::string& url,
                   const std::vector<Sample>& samples, const Reference& reference,
                   const RunSpec& spec, const ProgressFn& progress = {});

}  // namespace onepass::bench
