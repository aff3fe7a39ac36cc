// Which traces are recorded and exported: the OpenTelemetry SDK's built-in samplers, chosen by
// OTEL_TRACES_SAMPLER / OTEL_TRACES_SAMPLER_ARG. A parent-based sampler follows the caller's
// sampled flag when a traceparent came in and uses its root sampler otherwise.
#pragma once

#include <string_view>

#include "trace/context.h"

namespace onepass::trace {

class Sampler {
 public:
  enum class Root { kAlwaysOn, kAlwaysOff, kTraceIdRatio };

  Sampler() = default;
  Sampler(Root root, double ratio, bool parent_based);

  // OTEL_TRACES_SAMPLER's names (always_on, always_off, traceidratio, parentbased_always_on,
  // parentbased_always_off, parentbased_traceidratio; empty: parentbased_always_on) and
  // OTEL_TRACES_SAMPLER_ARG (the ratio in [0, 1]; empty: 1). Throws Error(kInvalidArgument)
  // naming the variable for anything else.
  static Sampler from_names(std::string_view name, std::string_view argument);

  // Whether a new span in `trace_id` is sampled; `parent` is null for a root span.
  bool should_sample(const SpanContext* parent, const TraceId& trace_id) const;

  Root root() const { return root_; }
  double ratio() const { return ratio_; }
  bool parent_based() const { return parent_based_; }

 private:
  Root root_ = Root::kAlwaysOn;
  double ratio_ = 1.0;
  bool parent_based_ = true;
};

// The trace id ratio rule: the id's last 8 bytes, read big-endian, below ratio * 2^64. Every
// service that uses the same rule samples the same traces at the same ratio.
bool trace_id_below_ratio(const TraceId& trace_id, double ratio);

}  // namespace onepass::trace
