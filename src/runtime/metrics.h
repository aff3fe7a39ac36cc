// Prometheus metrics of the runtime and the HTTP layer (docs/api.md "Metrics"), rendered in the
// text exposition format (version 0.0.4): every family has HELP and TYPE lines, histograms have
// cumulative _bucket series with an `le` label ending at +Inf, then _sum and _count.
//
// Thread-safe: recording and rendering take one internal mutex (recording is a few map look-ups
// per request or batch, never per token).
#pragma once

#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/service.h"

namespace onepass::runtime {

// Gauges are read from the runtime's state when rendering.
struct ModelGauges {
  std::string model;
  std::size_t queue_depth = 0;        // inputs waiting for tokenization or for a batch
  std::size_t batch_queue_depth = 0;  // of those, tokenized and waiting for a batch
  bool loaded = false;
  bool failed = false;           // its load (or its Hub download) failed; load_error says why
  double load_seconds = 0;       // duration of the last successful load
  PrecisionSelection precision;  // of the loaded model; empty when not loaded
};

struct RuntimeGauges {
  std::size_t in_flight_requests = 0;
  std::vector<ModelGauges> models;
};

class Histogram {
 public:
  explicit Histogram(std::span<const double> bounds);
  void observe(double value);
  std::span<const double> bounds() const { return bounds_; }
  const std::vector<std::uint64_t>& counts() const { return counts_; }  // not cumulative
  double sum() const { return sum_; }
  std::uint64_t count() const { return count_; }

 private:
  std::span<const double> bounds_;
  std::vector<std::uint64_t> counts_;  // bounds_.size() + 1 (the last is +Inf)
  double sum_ = 0;
  std::uint64_t count_ = 0;
};

class Metrics {
 public:
  void record_http_request(std::string_view route, std::string_view model, int status,
                           std::chrono::nanoseconds duration);
  // A request the runtime completed (successfully or not).
  void record_request(std::string_view model, std::size_t inputs, std::size_t tokens,
                      const InferenceTimings& timings, bool ok);
  void record_batch(std::string_view model, std::size_t inputs, std::size_t tokens);
  // A request dropped before its forward pass because its deadline passed.
  void record_expired(std::string_view model);

  std::string render(const RuntimeGauges& gauges) const;

 private:
  struct ModelSeries {
    std::uint64_t inputs = 0;
    std::uint64_t tokens = 0;
    std::uint64_t failed = 0;
    std::uint64_t expired = 0;
    Histogram total, queue, tokenization, inference, batch_inputs, batch_tokens;
    ModelSeries();
  };
  ModelSeries& series(std::string_view model);

  mutable std::mutex mutex_;
  // key: route, model, status joined by '\n' (none of them holds a newline after escaping).
  std::map<std::string, std::uint64_t, std::less<>> http_requests_;
  std::map<std::string, Histogram, std::less<>> http_durations_;  // by route
  std::map<std::string, ModelSeries, std::less<>> models_;
};

// Escapes a label value as the text format requires (backslash, double quote, newline).
std::string escape_label_value(std::string_view value);

}  // namespace onepass::runtime
