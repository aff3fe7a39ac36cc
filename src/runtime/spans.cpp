#include "runtime/spans.h"

#include <algorithm>
#include <vector>

#include "trace/tracer.h"

namespace onepass::runtime {
namespace {

using Clock = std::chrono::steady_clock;

void batch_span(const BatchSpan& batch, std::span<const Job* const> jobs) {
  trace::Tracer* tracer = trace::active();
  if (tracer == nullptr) return;
  std::vector<const Job*> sampled;
  std::vector<const Job*> requests;
  for (const Job* job : jobs) {
    if (std::find(requests.begin(), requests.end(), job) == requests.end()) requests.push_back(job);
    if (job->request.trace.sampled() &&
        std::find(sampled.begin(), sampled.end(), job) == sampled.end())
      sampled.push_back(job);
  }
  if (sampled.empty()) return;
  trace::SpanData span;
  span.trace_id = trace::random_trace_id();
  span.span_id = trace::random_span_id();
  span.flags = trace::kSampledFlag;  // recorded because requests it served are
  span.name = "onepass.forward";
  span.start_unix_ns = trace::unix_nanos(batch.start);
  span.end_unix_ns = trace::unix_nanos(batch.end);
  span.set("gen_ai.request.model", batch.model)
      .set("onepass.model.architecture", batch.architecture)
      .set("onepass.precision", batch.precision)
      .set("onepass.batch.sequences", batch.sequences)
      .set("onepass.batch.requests", requests.size())
      .set("onepass.batch.tokens", batch.tokens);
  for (const Job* job : sampled) {
    const trace::SpanContext& request = job->request.trace;
    span.links.push_back({request.trace_id, request.span_id, request.trace_state, request.flags});
  }
  tracer->record(std::move(span));
}

void job_spans(const Job& job) {
  trace::Tracer* tracer = trace::active();
  const trace::SpanContext& parent = job.request.trace;
  if (tracer == nullptr || !parent.sampled()) return;
  const bool tokenized = job.tokenize_start != Clock::time_point{};
  const Clock::time_point admitted_end = tokenized ? job.tokenize_start : Clock::now();
  trace::SpanData admission =
      trace::child_span(parent, "onepass.admission", job.admitted, admitted_end);
  admission.set("gen_ai.request.model", job.model_name);
  tracer->record(std::move(admission));
  if (!tokenized) return;
  const Clock::time_point tokenized_end =
      job.queued != Clock::time_point{} ? job.queued
                                        : job.tokenize_start + job.result.timings.tokenization;
  std::size_t tokens = 0;
  for (const PreparedItem& item : job.prepared) tokens += item.input_ids.size();
  trace::SpanData tokenize =
      trace::child_span(parent, "onepass.tokenize", job.tokenize_start, tokenized_end);
  tokenize.set("onepass.inputs", job.request.items.size())
      .set("onepass.sequences", job.prepared.size())
      .set("gen_ai.usage.input_tokens", tokens);
  if (job.failed.load(std::memory_order_relaxed) && !job.first_batch_started) {
    tokenize.status = trace::StatusCode::kError;
    try {
      if (job.error) std::rethrow_exception(job.error);
    } catch (const std::exception& e) {
      tokenize.status_message = e.what();
    } catch (...) {
    }
  }
  tracer->record(std::move(tokenize));
  if (!job.first_batch_started) return;
  tracer->record(trace::child_span(parent, "onepass.queue", job.queued, job.compute_start));
  trace::SpanData inference =
      trace::child_span(parent, "onepass.inference", job.compute_start, job.compute_end);
  inference.set("onepass.sequences", job.prepared.size());
  tracer->record(std::move(inference));
}

}  // namespace

void record_batch_span(const BatchSpan& batch, std::span<const Job* const> jobs) noexcept {
  try {
    batch_span(batch, jobs);
  } catch (...) {
    // A span is never worth a compute thread (an allocation failure here is dropped).
  }
}

void record_job_spans(const Job& job) noexcept {
  try {
    job_spans(job);
  } catch (...) {
  }
}

void record_model_span(std::string_view span_name, std::string_view model,
                       std::span<const std::pair<std::string_view, std::string_view>> attributes,
                       Clock::time_point start, Clock::time_point end,
                       std::string_view error) noexcept {
  try {
    trace::Tracer* tracer = trace::active();
    if (tracer == nullptr) return;
    const trace::SpanContext context = tracer->start(nullptr);
    if (!context.sampled()) return;
    trace::SpanData span;
    span.trace_id = context.trace_id;
    span.span_id = context.span_id;
    span.flags = context.flags;
    span.name = std::string(span_name);
    span.start_unix_ns = trace::unix_nanos(start);
    span.end_unix_ns = trace::unix_nanos(end);
    span.set("gen_ai.request.model", model);
    for (const auto& [key, value] : attributes) span.set(std::string(key), value);
    if (!error.empty()) {
      span.status = trace::StatusCode::kError;
      span.status_message = std::string(error);
    }
    tracer->record(std::move(span));
  } catch (...) {
    // Tracing never fails a load.
  }
}

}  // namespace onepass::runtime
