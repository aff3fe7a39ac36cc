#include "bench/load.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <memory>
#include <thread>

#include "base/error.h"

namespace onepass::bench {
namespace {

using Clock = std::chrono::steady_clock;

struct Outcome {
  std::string error;  // empty when the request succeeded
  std::vector<Answer> answers;
};

// One request: build, send, parse. Never throws for the server's faults; they become an error
// key, because a benchmark under load must count failures, not stop at the first.
Outcome exchange(const Dialect& dialect, http::Connection& connection,
                 std::span<const Sample* const> batch, Task task) {
  Outcome outcome;
  http::Response response;
  try {
    response = connection.send(dialect.build(batch, task));
  } catch (const http::TransportError& e) {
    outcome.error = http::transport_failure_name(e.failure());
    return outcome;
  }
  if (response.status < 200 || response.status > 299) {
    outcome.error = std::to_string(response.status);
    return outcome;
  }
  try {
    outcome.answers = dialect.parse(response, batch.size(), task);
  } catch (const Error&) {
    outcome.error = "bad_response";
  }
  return outcome;
}

double seconds(Clock::duration d) { return std::chrono::duration<double>(d).count(); }

struct Record {
  bool done = false;
  std::string error;
  double latency_s = 0;
  Clock::time_point sent, finished;
  std::size_t samples = 0, verified = 0, mismatches = 0, labelled = 0, correct = 0;
  std::size_t retries = 0;
};

}  // namespace

std::optional<double> Reference::accuracy() const {
  if (labelled == 0) return std::nullopt;
  return static_cast<double>(correct) / static_cast<double>(labelled);
}

Task Reference::answered_task() const {
  // Entity and answer-span answers carry a label, but only their own requests read them; sparse
  // answers have none, as embeddings.
  if (task == Task::kTokens || task == Task::kSparse || task == Task::kQuestion) return task;
  for (const auto& answer : answers) {
    if (answer) return answer->label.empty() ? Task::kEmbed : Task::kClassify;
  }
  return task;
}

std::optional<double> RunResult::accuracy() const {
  if (labelled == 0) return std::nullopt;
  return static_cast<double>(correct) / static_cast<double>(labelled);
}

Reference reference_pass(const Dialect& dialect, const http::Url& url,
                         const std::vector<Sample>& samples, std::size_t count, Task task,
                         std::chrono::milliseconds timeout) {
  count = std::min(count, samples.size());
  http::Connection connection(url, timeout);
  Reference reference;
  reference.answers.resize(count);
  const auto asked = dialect.tasks();
  if (task == Task::kSparse && std::find(asked.begin(), asked.end(), task) == asked.end()) {
    throw Error(ErrorKind::kInvalidArgument,
                "--task sparse: the " + std::string(dialect.name()) +
                    " dialect has no sparse-embedding route (tei has /embed_sparse)");
  }
  if (task == Task::kQuestion && std::find(asked.begin(), asked.end(), task) == asked.end()) {
    throw Error(ErrorKind::kInvalidArgument,
                "--task qa: the " + std::string(dialect.name()) +
                    " dialect has no question-answering route (onepass and hf have /invocations)");
  }
  std::vector<Task> candidates = task == Task::kAuto ? asked : std::vector<Task>{task};
  std::size_t answered = 0;
  std::string last_error;
  for (std::size_t i = 0; i < count; ++i) {
    const Sample* one[] = {&samples[i]};
    Outcome outcome;
    // Until one task has answered, try each candidate on this sample.
    for (std::size_t c = 0; c < candidates.size(); ++c) {
      outcome = exchange(dialect, connection, one, candidates[c]);
      if (outcome.error.empty()) {
        reference.task = candidates[c];
        candidates = {candidates[c]};
        break;
      }
    }
    if (!outcome.error.empty()) {
      ++reference.errors[outcome.error];
      last_error = outcome.error;
      continue;
    }
    ++answered;
    Answer& answer = outcome.answers.front();
    if (samples[i].label && !answer.label.empty() && answer.label_named) {
      ++reference.labelled;
      reference.correct += same_label(answer.label, *samples[i].label);
    }
    reference.answers[i] = std::move(answer);
  }
  if (answered == 0 && count > 0) {
    throw Error(ErrorKind::kUnavailable, "endpoint " + url.to_string() + " answered no request (" +
                                             last_error + ") with the " +
                                             std::string(dialect.name()) + " dialect");
  }
  if (candidates.size() == 1) reference.task = candidates.front();
  return reference;
}

RunResult run_load(const Dialect& dialect, const http::Url& url, const std::vector<Sample>& samples,
                   const Reference& reference, const RunSpec& spec, const ProgressFn& progress) {
  ONEPASS_CHECK(!samples.empty(), "run_load without samples");
  if (spec.batch_size == 0 || spec.concurrency == 0) {
    throw Error(ErrorKind::kInvalidArgument, "batch size and concurrency must be >= 1");
  }
  const std::size_t n = spec.requests;
  const std::size_t b = spec.batch_size;
  const bool paced = !std::isinf(spec.arrivals.request_rate);
  const auto offsets = send_offsets(spec.arrivals, n, spec.seed);
  auto batch_of = [&](std::size_t i) {
    std::vector<const Sample*> batch(b);
    for (std::size_t k = 0; k < b; ++k) batch[k] = &samples[(i * b + k) % samples.size()];
    return batch;
  };

  const std::size_t workers = std::max<std::size_t>(1, std::min(spec.concurrency, n));
  std::vector<std::unique_ptr<http::Connection>> connections;
  for (std::size_t w = 0; w < workers; ++w) {
    connections.push_back(std::make_unique<http::Connection>(url, spec.timeout));
    try {
      connections.back()->connect();
    } catch (const http::TransportError&) {
      // counted when its requests fail
    }
  }
  for (std::size_t i = 0; i < spec.warmup; ++i) {
    const auto batch = batch_of(i);
    exchange(dialect, *connections[i % workers], batch, reference.task);
  }

  std::vector<Record> records(n);
  std::atomic<std::size_t> next{0}, finished{0};
  const Clock::time_point start = Clock::now() + std::chrono::milliseconds(5);
  auto work = [&](http::Connection& connection) {
    for (;;) {
      const std::size_t i = next.fetch_add(1);
      if (i >= n) return;
      const Clock::time_point due = start + offsets[i];
      std::this_thread::sleep_until(paced ? due : start);
      Record& r = records[i];
      r.sent = std::max(Clock::now(), start);
      const auto batch = batch_of(i);  // built after the due time: its cost is part of latency
      const std::size_t retries_before = connection.retries();
      Outcome outcome = exchange(dialect, connection, batch, reference.task);
      r.finished = Clock::now();
      r.retries = connection.retries() - retries_before;
      r.latency_s = seconds(r.finished - (paced ? due : r.sent));
      r.error = std::move(outcome.error);
      r.samples = b;
      for (std::size_t k = 0; k < outcome.answers.size(); ++k) {
        const std::size_t sample = (i * b + k) % samples.size();
        if (sample < reference.answers.size() && reference.answers[sample]) {
          ++r.verified;
          r.mismatches +=
              !same_answer(outcome.answers[k], *reference.answers[sample], spec.tolerance);
        }
        if (samples[sample].label && !outcome.answers[k].label.empty() &&
            outcome.answers[k].label_named) {
          ++r.labelled;
          r.correct += same_label(outcome.answers[k].label, *samples[sample].label);
        }
      }
      r.done = true;
      finished.fetch_add(1);
    }
  };
  std::vector<std::thread> threads;
  for (std::size_t w = 0; w < workers; ++w) threads.emplace_back(work, std::ref(*connections[w]));
  if (progress) {
    while (finished.load() < n) {
      progress(finished.load(), n);
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    progress(n, n);
  }
  for (auto& t : threads) t.join();

  RunResult result;
  result.spec = spec;
  std::vector<double> latencies_ms;
  Clock::time_point last_done = start, first_sent = Clock::time_point::max(), last_sent = start;
  for (const Record& r : records) {
    first_sent = std::min(first_sent, r.sent);
    last_sent = std::max(last_sent, r.sent);
    last_done = std::max(last_done, r.finished);
    result.verified += r.verified;
    result.mismatches += r.mismatches;
    result.labelled += r.labelled;
    result.correct += r.correct;
    result.retries += r.retries;
    if (!r.error.empty()) {
      ++result.errors[r.error];
      continue;
    }
    ++result.ok_requests;
    result.ok_samples += r.samples;
    latencies_ms.push_back(r.latency_s * 1e3);
  }
  result.duration_s = seconds(last_done - start);
  if (result.duration_s > 0) {
    result.requests_per_s = static_cast<double>(result.ok_requests) / result.duration_s;
    result.samples_per_s = static_cast<double>(result.ok_samples) / result.duration_s;
  }
  // n sends span n-1 gaps; a single request has no rate of its own, so use the run's length.
  const double span = n > 1 ? seconds(last_sent - first_sent) : 0;
  result.achieved_rate = span > 0                ? static_cast<double>(n - 1) / span
                         : result.duration_s > 0 ? static_cast<double>(n) / result.duration_s
                                                 : 0;
  result.latency_ms = summarize(std::move(latencies_ms));
  return result;
}

}  // namespace onepass::bench
