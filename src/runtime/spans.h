// The runtime's trace spans (docs/tracing.md), recorded after the fact from the timestamps the
// scheduler keeps anyway: a sampled request's phases as children of its request span, and one
// span per forward pass linked to every sampled request that rode in it. Called only while a
// tracer is installed (trace::active()), so with tracing off none of this runs.
#pragma once

#include <chrono>
#include <cstddef>
#include <span>
#include <string_view>
#include <utility>

#include "runtime/job.h"

namespace onepass::runtime {

struct BatchSpan {
  std::string_view model;
  std::string_view architecture;
  std::string_view precision;
  std::size_t sequences = 0;
  std::size_t tokens = 0;
  std::chrono::steady_clock::time_point start, end;
};

// One span for the forward pass, in a trace of its own, when at least one of `jobs` (one entry
// per sequence of the batch, a job repeated for each of its sequences) is sampled: linked to each
// sampled request's span, counting every request of the batch.
void record_batch_span(const BatchSpan& batch, std::span<const Job* const> jobs) noexcept;

// A finished sampled job's admission (waiting for a tokenizer thread, or for its model to load),
// tokenization, batch queue and inference spans.
void record_job_spans(const Job& job) noexcept;

// A model's Hub resolution (onepass.hub.resolve: the download, or the cache hit) or load
// (onepass.model.load): the root of a trace of its own, sampled as the sampler samples new
// traces; ERROR with `error` when it failed (empty: it succeeded).
void record_model_span(std::string_view span_name, std::string_view model,
                       std::span<const std::pair<std::string_view, std::string_view>> attributes,
                       std::chrono::steady_clock::time_point start,
                       std::chrono::steady_clock::time_point end, std::string_view error) noexcept;

}  // namespace onepass::runtime
