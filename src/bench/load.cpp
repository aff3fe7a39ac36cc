#include "bench/load.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <memory>
#include <mutex>
#include <random>
#include <thread>

#include "base/error.h"
#include "bench/transport.h"

namespace onepass::bench {
namespace {

using Clock = std::chrono::steady_clock;

double uniform01() {
  thread_local std::mt19937_64 generator{std::random_device{}()};
  return std::uniform_real_distribution<double>(0.0, 1.0)(generator);
}

// Sends through the SageMaker Runtime API: /invocations, signed per attempt, SageMaker's errors
// read, throttling and transient failures retried as the AWS SDK's standard mode does.
http::Response send_to_sagemaker(const SageMakerRuntime& runtime, http::Connection& connection,
                                 http::Request request, Outcome& outcome) {
  request.target = "/invocations";
  int held = 0;  // quota tokens the current retry holds
  for (std::size_t attempt = 1;; ++attempt) {
    try {
      runtime.sign(request, connection.url());
    } catch (const Error& e) {
      // Credentials that cannot be refreshed mid-run: no later request can be signed either.
      outcome.error = "credentials";
      outcome.stop = std::string("cannot sign the request: ") + e.what();
      return {};
    }
    http::Response response;
    bool timed_out = false;
    std::optional<SageMakerError> error;
    try {
      response = connection.send(request);
      if (response.status >= 200 && response.status <= 299) {
        runtime.quota.release(held > 0 ? held : RetryQuota::kSuccessRefund);
        return response;
      }
      error = read_sagemaker_error(response);
    } catch (const http::TransportError& e) {
      if (e.failure() == http::TransportFailure::kProtocol) throw;
      timed_out = e.failure() == http::TransportFailure::kTimeout;
      if (attempt >= runtime.max_attempts) throw;
      // connect and io failures are transient: fall through to a retry below
      if (!runtime.quota.acquire(timed_out ? RetryQuota::kTimeoutCost : RetryQuota::kRetryCost))
        throw;
      held = timed_out ? RetryQuota::kTimeoutCost : RetryQuota::kRetryCost;
      ++outcome.sdk_retries;
      std::this_thread::sleep_for(runtime.backoff(attempt, uniform01()));
      continue;
    }
    const ErrorDisposition disposition = classify(*error);
    if (disposition == ErrorDisposition::kRetryThrottled) ++outcome.throttled;
    const bool retryable = disposition == ErrorDisposition::kRetryThrottled ||
                           disposition == ErrorDisposition::kRetryTransient;
    if (!retryable || attempt >= runtime.max_attempts ||
        !runtime.quota.acquire(RetryQuota::kRetryCost)) {
      outcome.error = error_key(*error);
      outcome.error_message = error_text(*error);
      if (disposition == ErrorDisposition::kStop) outcome.stop = runtime.stop_message(*error);
      return response;
    }
    held = RetryQuota::kRetryCost;
    ++outcome.sdk_retries;
    std::this_thread::sleep_for(runtime.backoff(attempt, uniform01()));
  }
}

// HTTP: one keep-alive connection; build, send, parse.
class HttpTransport final : public Transport {
 public:
  HttpTransport(const http::Url& url, std::chrono::milliseconds timeout)
      : connection_(url, timeout) {}

  void connect() override { connection_.connect(); }
  std::size_t retries() const override { return connection_.retries(); }

  Outcome exchange(const Dialect& dialect, std::span<const Sample* const> batch,
                   Task task) override {
    Outcome outcome;
    http::Response response;
    const SageMakerRuntime* sagemaker = dialect.options().sagemaker.get();
    try {
      response = sagemaker != nullptr ? send_to_sagemaker(*sagemaker, connection_,
                                                          dialect.build(batch, task), outcome)
                                      : connection_.send(dialect.build(batch, task));
    } catch (const http::TransportError& e) {
      outcome.error = http::transport_failure_name(e.failure());
      return outcome;
    }
    if (!outcome.error.empty()) return outcome;
    if (response.status < 200 || response.status > 299) {
      outcome.error = std::to_string(response.status);
      return outcome;
    }
    if (sagemaker != nullptr)
      outcome.variant = response.header("x-Amzn-Invoked-Production-Variant");
    try {
      outcome.answers = dialect.parse(response, batch.size(), task);
    } catch (const Error&) {
      outcome.error = "bad_response";
    }
    return outcome;
  }

 private:
  http::Connection connection_;
};

double seconds(Clock::duration d) { return std::chrono::duration<double>(d).count(); }

struct Record {
  bool done = false;
  std::string error;
  double latency_s = 0;
  Clock::time_point sent, finished;
  std::size_t samples = 0, verified = 0, mismatches = 0, labelled = 0, correct = 0;
  std::size_t retries = 0, throttled = 0, sdk_retries = 0;
  std::string error_message, variant;
};

}  // namespace

bool is_grpc_url(const std::string& url) { return url.rfind("grpc://", 0) == 0; }

std::string grpc_target(const std::string& url) {
  auto bad = [&] {
    return Error(ErrorKind::kInvalidArgument,
                 "'" + url + "' is not a gRPC endpoint: grpc://HOST:PORT");
  };
  if (!is_grpc_url(url)) throw bad();
  std::string rest = url.substr(7);
  if (!rest.empty() && rest.back() == '/') rest.pop_back();
  const std::size_t colon = rest.rfind(':');
  if (colon == std::string::npos || colon == 0 || rest.find('/') != std::string::npos) throw bad();
  const std::string host = rest.substr(0, colon), port = rest.substr(colon + 1);
  if (host.find(':') != std::string::npos && (host.front() != '[' || host.back() != ']'))
    throw bad();
  if (port.empty() || port.size() > 5 ||
      port.find_first_not_of("0123456789") != std::string::npos || std::stoi(port) == 0 ||
      std::stoi(port) > 65535)
    throw bad();
  return rest;
}

std::unique_ptr<Transport> open_transport(const Dialect& dialect, const std::string& url,
                                          std::chrono::milliseconds timeout) {
  if (dialect.protocol() == Protocol::kGrpc) {
    if (!is_grpc_url(url))
      throw Error(ErrorKind::kInvalidArgument, "the " + std::string(dialect.name()) +
                                                   " dialect speaks gRPC: --endpoint "
                                                   "grpc://HOST:PORT, not '" +
                                                   url + "'");
    return open_grpc_transport(grpc_target(url), timeout);
  }
  if (is_grpc_url(url))
    throw Error(ErrorKind::kInvalidArgument,
                "the " + std::string(dialect.name()) +
                    " dialect speaks HTTP; a grpc:// endpoint needs --dialect kserve-grpc or "
                    "tei-grpc");
  return std::make_unique<HttpTransport>(http::Url::parse(url), timeout);
}

std::optional<double> Reference::accuracy() const {
  if (labelled == 0) return std::nullopt;
  return static_cast<double>(correct) / static_cast<double>(labelled);
}

Task Reference::answered_task() const {
  // Entity and answer-span answers carry a label, but only their own requests read them; sparse
  // answers have none, as embeddings.
  if (task == Task::kTokens || task == Task::kSparse || task == Task::kQuestion ||
      task == Task::kExtract)
    return task;
  for (const auto& answer : answers) {
    if (answer) return answer->label.empty() ? Task::kEmbed : Task::kClassify;
  }
  return task;
}

std::optional<double> RunResult::accuracy() const {
  if (labelled == 0) return std::nullopt;
  return static_cast<double>(correct) / static_cast<double>(labelled);
}

Reference reference_pass(const Dialect& dialect, const std::string& url,
                         const std::vector<Sample>& samples, std::size_t count, Task task,
                         std::chrono::milliseconds timeout) {
  count = std::min(count, samples.size());
  const auto transport = open_transport(dialect, url, timeout);
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
  if (task == Task::kExtract && std::find(asked.begin(), asked.end(), task) == asked.end()) {
    throw Error(ErrorKind::kInvalidArgument,
                "--task extract: the " + std::string(dialect.name()) +
                    " dialect has no entity-extraction route (onepass has /extract)");
  }
  std::vector<Task> candidates = task == Task::kAuto ? asked : std::vector<Task>{task};
  std::size_t answered = 0;
  std::string last_error;
  for (std::size_t i = 0; i < count; ++i) {
    const Sample* one[] = {&samples[i]};
    Outcome outcome;
    // Until one task has answered, try each candidate on this sample.
    for (std::size_t c = 0; c < candidates.size(); ++c) {
      outcome = transport->exchange(dialect, one, candidates[c]);
      if (!outcome.stop.empty()) throw Error(ErrorKind::kInvalidArgument, outcome.stop);
      if (outcome.error.empty()) {
        reference.task = candidates[c];
        candidates = {candidates[c]};
        break;
      }
    }
    if (!outcome.error.empty()) {
      ++reference.errors[outcome.error];
      if (!outcome.error_message.empty())
        reference.error_messages.try_emplace(outcome.error, outcome.error_message);
      last_error = outcome.error_message.empty() ? outcome.error : outcome.error_message;
      // Nothing listens there: three refused connections say so without trying every sample
      // (each one retried with backoff on the SageMaker path).
      if (answered == 0 && i + 1 >= 3 && reference.errors.size() == 1 &&
          reference.errors.count("connect") == 1) {
        break;
      }
      continue;
    }
    ++answered;
    if (!outcome.variant.empty()) ++reference.variants[outcome.variant];
    Answer& answer = outcome.answers.front();
    if (samples[i].label && !answer.label.empty() && answer.label_named) {
      ++reference.labelled;
      reference.correct += same_label(answer.label, *samples[i].label);
    }
    reference.answers[i] = std::move(answer);
  }
  if (answered == 0 && count > 0) {
    throw Error(ErrorKind::kUnavailable, "endpoint " + url + " answered no request (" + last_error +
                                             ") with the " + std::string(dialect.name()) +
                                             " dialect");
  }
  if (candidates.size() == 1) reference.task = candidates.front();
  return reference;
}

RunResult run_load(const Dialect& dialect, const std::string& url,
                   const std::vector<Sample>& samples, const Reference& reference,
                   const RunSpec& spec, const ProgressFn& progress) {
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
  std::vector<std::unique_ptr<Transport>> connections;
  for (std::size_t w = 0; w < workers; ++w) {
    connections.push_back(open_transport(dialect, url, spec.timeout));
    try {
      connections.back()->connect();
    } catch (const Error&) {
      // counted when its requests fail
    }
  }
  for (std::size_t i = 0; i < spec.warmup; ++i) {
    const auto batch = batch_of(i);
    connections[i % workers]->exchange(dialect, batch, reference.task);
  }

  std::vector<Record> records(n);
  std::atomic<std::size_t> next{0}, finished{0};
  std::atomic<bool> stopped{false};
  std::mutex stop_mutex;
  std::string stop_message;
  const Clock::time_point start = Clock::now() + std::chrono::milliseconds(5);
  auto work = [&](Transport& connection) {
    for (;;) {
      if (stopped.load()) return;
      const std::size_t i = next.fetch_add(1);
      if (i >= n) return;
      const Clock::time_point due = start + offsets[i];
      std::this_thread::sleep_until(paced ? due : start);
      Record& r = records[i];
      r.sent = std::max(Clock::now(), start);
      const auto batch = batch_of(i);  // built after the due time: its cost is part of latency
      const std::size_t retries_before = connection.retries();
      Outcome outcome = connection.exchange(dialect, batch, reference.task);
      r.finished = Clock::now();
      r.retries = connection.retries() - retries_before;
      r.latency_s = seconds(r.finished - (paced ? due : r.sent));
      if (!outcome.stop.empty()) {
        std::lock_guard<std::mutex> lock(stop_mutex);
        if (!stopped.exchange(true)) stop_message = outcome.stop;
      }
      r.error = std::move(outcome.error);
      r.error_message = std::move(outcome.error_message);
      r.variant = std::move(outcome.variant);
      r.throttled = outcome.throttled;
      r.sdk_retries = outcome.sdk_retries;
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
    while (finished.load() < n && !stopped.load()) {
      progress(finished.load(), n);
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    if (!stopped.load()) progress(n, n);
  }
  for (auto& t : threads) t.join();
  if (stopped.load()) throw Error(ErrorKind::kInvalidArgument, stop_message);

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
    result.throttled += r.throttled;
    result.sdk_retries += r.sdk_retries;
    if (!r.error.empty()) {
      ++result.errors[r.error];
      if (!r.error_message.empty()) result.error_messages.try_emplace(r.error, r.error_message);
      continue;
    }
    if (!r.variant.empty()) ++result.variants[r.variant];
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
