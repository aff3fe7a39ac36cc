#include "runtime/metrics.h"

#include <fmt/format.h>

#include "trace/tracer.h"

namespace onepass::runtime {
namespace {

constexpr std::array<double, 16> kSecondsBounds = {
    0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60};
constexpr std::array<double, 11> kInputBounds = {1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024};
constexpr std::array<double, 12> kTokenBounds = {16,   32,   64,   128,  256,   512,
                                                 1024, 2048, 4096, 8192, 16384, 32768};

double seconds(std::chrono::nanoseconds d) { return std::chrono::duration<double>(d).count(); }

std::string number(double value) { return fmt::format("{}", value); }

void family(std::string& out, std::string_view name, std::string_view type, std::string_view help) {
  fmt::format_to(std::back_inserter(out), "# HELP {} {}\n# TYPE {} {}\n", name, help, name, type);
}

// `labels` is the rendered label list without braces ("" for none).
void histogram_series(std::string& out, std::string_view name, const std::string& labels,
                      const Histogram& h) {
  const std::string sep = labels.empty() ? "" : ",";
  std::uint64_t cumulative = 0;
  for (std::size_t i = 0; i < h.bounds().size(); ++i) {
    cumulative += h.counts()[i];
    fmt::format_to(std::back_inserter(out), "{}_bucket{{{}{}le=\"{}\"}} {}\n", name, labels, sep,
                   number(h.bounds()[i]), cumulative);
  }
  cumulative += h.counts().back();
  fmt::format_to(std::back_inserter(out), "{}_bucket{{{}{}le=\"+Inf\"}} {}\n", name, labels, sep,
                 cumulative);
  const std::string braced = labels.empty() ? "" : "{" + labels + "}";
  fmt::format_to(std::back_inserter(out), "{}_sum{} {}\n{}_count{} {}\n", name, braced,
                 number(h.sum()), name, braced, h.count());
}

std::string model_label(std::string_view model) {
  return "model=\"" + escape_label_value(model) + "\"";
}

}  // namespace

std::string escape_label_value(std::string_view value) {
  std::string out;
  out.reserve(value.size());
  for (char c : value) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '"') {
      out += "\\\"";
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out;
}

Histogram::Histogram(std::span<const double> bounds)
    : bounds_(bounds), counts_(bounds.size() + 1, 0) {}

void Histogram::observe(double value) {
  std::size_t i = 0;
  while (i < bounds_.size() && value > bounds_[i]) ++i;
  ++counts_[i];
  sum_ += value;
  ++count_;
}

Metrics::ModelSeries::ModelSeries()
    : total(kSecondsBounds),
      queue(kSecondsBounds),
      tokenization(kSecondsBounds),
      inference(kSecondsBounds),
      batch_inputs(kInputBounds),
      batch_tokens(kTokenBounds) {}

Metrics::ModelSeries& Metrics::series(std::string_view model) {
  auto it = models_.find(model);
  if (it == models_.end()) it = models_.try_emplace(std::string(model)).first;
  return it->second;
}

void Metrics::record_http_request(std::string_view route, std::string_view model, int status,
                                  std::chrono::nanoseconds duration) {
  std::string key = fmt::format("route=\"{}\",model=\"{}\",status=\"{}\"",
                                escape_label_value(route), escape_label_value(model), status);
  std::lock_guard lock(mutex_);
  ++http_requests_[key];
  auto it = http_durations_.find(route);
  if (it == http_durations_.end()) {
    it = http_durations_.try_emplace(std::string(route), Histogram(kSecondsBounds)).first;
  }
  it->second.observe(seconds(duration));
}

void Metrics::record_request(std::string_view model, std::size_t inputs, std::size_t tokens,
                             const InferenceTimings& timings, bool ok) {
  std::lock_guard lock(mutex_);
  ModelSeries& s = series(model);
  s.total.observe(seconds(timings.total));
  if (!ok) {
    ++s.failed;
    return;
  }
  s.inputs += inputs;
  s.tokens += tokens;
  s.queue.observe(seconds(timings.queue));
  s.tokenization.observe(seconds(timings.tokenization));
  s.inference.observe(seconds(timings.inference));
}

void Metrics::record_batch(std::string_view model, std::size_t inputs, std::size_t tokens) {
  std::lock_guard lock(mutex_);
  ModelSeries& s = series(model);
  s.batch_inputs.observe(static_cast<double>(inputs));
  s.batch_tokens.observe(static_cast<double>(tokens));
}

void Metrics::record_expired(std::string_view model) {
  std::lock_guard lock(mutex_);
  ++series(model).expired;
}

std::string Metrics::render(const RuntimeGauges& gauges) const {
  std::string out;
  auto it = std::back_inserter(out);
  std::lock_guard lock(mutex_);

  family(out, "onepass_requests_total", "counter", "HTTP requests by route, model and status.");
  for (const auto& [labels, count] : http_requests_) {
    fmt::format_to(it, "onepass_requests_total{{{}}} {}\n", labels, count);
  }
  family(out, "onepass_http_request_duration_seconds", "histogram",
         "Time from reading an HTTP request to writing its answer, by route.");
  for (const auto& [route, h] : http_durations_) {
    histogram_series(out, "onepass_http_request_duration_seconds",
                     "route=\"" + escape_label_value(route) + "\"", h);
  }

  using Counter = std::uint64_t ModelSeries::*;
  const std::pair<const char*, Counter> counters[] = {
      {"onepass_inputs_total", &ModelSeries::inputs},
      {"onepass_tokens_total", &ModelSeries::tokens},
      {"onepass_failed_requests_total", &ModelSeries::failed},
      {"onepass_expired_requests_total", &ModelSeries::expired}};
  const char* counter_help[] = {
      "Inputs served (each item of a client batch counts).",
      "Tokens of served inputs, special tokens included.",
      "Requests the runtime answered with an error.",
      "Requests dropped before their forward pass because their deadline passed (also failed)."};
  for (std::size_t c = 0; c < std::size(counters); ++c) {
    family(out, counters[c].first, "counter", counter_help[c]);
    for (const auto& [model, s] : models_) {
      fmt::format_to(it, "{}{{{}}} {}\n", counters[c].first, model_label(model),
                     s.*(counters[c].second));
    }
  }

  using Member = Histogram ModelSeries::*;
  struct HistogramFamily {
    const char* name;
    Member member;
    const char* help;
  };
  const HistogramFamily histograms[] = {
      {"onepass_request_duration_seconds", &ModelSeries::total,
       "Time from admission to completion of a request."},
      {"onepass_request_queue_duration_seconds", &ModelSeries::queue,
       "Time a request's inputs waited for a batch."},
      {"onepass_request_tokenization_duration_seconds", &ModelSeries::tokenization,
       "Time spent tokenizing and validating a request."},
      {"onepass_request_inference_duration_seconds", &ModelSeries::inference,
       "Time of the forward passes that computed a request."},
      {"onepass_batch_size_inputs", &ModelSeries::batch_inputs, "Inputs per forward pass."},
      {"onepass_batch_size_tokens", &ModelSeries::batch_tokens, "Tokens per forward pass."},
  };
  for (const HistogramFamily& f : histograms) {
    family(out, f.name, "histogram", f.help);
    for (const auto& [model, s] : models_)
      histogram_series(out, f.name, model_label(model), s.*(f.member));
  }

  family(out, "onepass_queue_depth", "gauge", "Inputs waiting for tokenization or for a batch.");
  for (const ModelGauges& m : gauges.models) {
    fmt::format_to(it, "onepass_queue_depth{{{}}} {}\n", model_label(m.model), m.queue_depth);
  }
  family(out, "onepass_batch_queue_depth", "gauge",
         "Inputs tokenized and waiting for a batch (part of onepass_queue_depth).");
  for (const ModelGauges& m : gauges.models) {
    fmt::format_to(it, "onepass_batch_queue_depth{{{}}} {}\n", model_label(m.model),
                   m.batch_queue_depth);
  }
  family(out, "onepass_inflight_requests", "gauge", "Requests admitted and not yet answered.");
  fmt::format_to(it, "onepass_inflight_requests {}\n", gauges.in_flight_requests);
  std::size_t loaded = 0;
  for (const ModelGauges& m : gauges.models) loaded += m.loaded ? 1 : 0;
  family(out, "onepass_loaded_models", "gauge", "Models loaded and ready.");
  fmt::format_to(it, "onepass_loaded_models {}\n", loaded);
  family(out, "onepass_model_failed", "gauge",
         "1 when the model's load (or download) failed; the log's model_load_failed says why.");
  for (const ModelGauges& m : gauges.models) {
    fmt::format_to(it, "onepass_model_failed{{{}}} {}\n", model_label(m.model), m.failed ? 1 : 0);
  }
  family(out, "onepass_model_load_seconds", "gauge", "Duration of each model's last load.");
  for (const ModelGauges& m : gauges.models) {
    fmt::format_to(it, "onepass_model_load_seconds{{{}}} {}\n", model_label(m.model),
                   number(m.load_seconds));
  }
  family(out, "onepass_model_precision", "gauge",
         "1 for each loaded model, labelled with the precision it runs in, the one asked for "
         "(auto or a precision) and, under auto, where the choice came from (gate or cache).");
  for (const ModelGauges& m : gauges.models) {
    if (m.precision.precision.empty()) continue;
    fmt::format_to(
        it, "onepass_model_precision{{{},precision=\"{}\",mode=\"{}\",source=\"{}\"}} 1\n",
        model_label(m.model), m.precision.precision, m.precision.mode, m.precision.source);
  }
  // Tracing (docs/tracing.md): spans sent, and spans lost rather than ever delaying a request.
  const trace::Counters spans = trace::counters();
  family(out, "onepass_trace_spans_exported_total", "counter",
         "Trace spans the OTLP collector accepted.");
  fmt::format_to(it, "onepass_trace_spans_exported_total {}\n", spans.exported);
  family(out, "onepass_trace_spans_dropped_total", "counter",
         "Trace spans lost: the export queue was full, or the collector failed their batch.");
  fmt::format_to(it, "onepass_trace_spans_dropped_total{{reason=\"queue_full\"}} {}\n",
                 spans.dropped_queue_full);
  fmt::format_to(it, "onepass_trace_spans_dropped_total{{reason=\"export_failed\"}} {}\n",
                 spans.dropped_export);
  return out;
}

}  // namespace onepass::runtime
