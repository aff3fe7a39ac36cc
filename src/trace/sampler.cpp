#include "trace/sampler.h"

#include <charconv>
#include <cmath>
#include <string>

#include "base/error.h"

namespace onepass::trace {

Sampler::Sampler(Root root, double ratio, bool parent_based)
    : root_(root), ratio_(ratio), parent_based_(parent_based) {}

Sampler Sampler::from_names(std::string_view name, std::string_view argument) {
  bool parent_based = false;
  std::string_view root = name;
  constexpr std::string_view kParentBased = "parentbased_";
  if (name.empty()) {
    root = "always_on";
    parent_based = true;
  } else if (name.substr(0, kParentBased.size()) == kParentBased) {
    root = name.substr(kParentBased.size());
    parent_based = true;
  }
  if (root == "always_on") return Sampler(Root::kAlwaysOn, 1.0, parent_based);
  if (root == "always_off") return Sampler(Root::kAlwaysOff, 0.0, parent_based);
  if (root != "traceidratio") {
    throw Error(ErrorKind::kInvalidArgument,
                "OTEL_TRACES_SAMPLER must be always_on, always_off, traceidratio, "
                "parentbased_always_on, parentbased_always_off or parentbased_traceidratio");
  }
  double ratio = 1.0;
  if (!argument.empty()) {
    const auto [end, error] =
        std::from_chars(argument.data(), argument.data() + argument.size(), ratio);
    if (error != std::errc() || end != argument.data() + argument.size() || !(ratio >= 0.0) ||
        ratio > 1.0) {
      throw Error(ErrorKind::kInvalidArgument,
                  "OTEL_TRACES_SAMPLER_ARG must be a number between 0 and 1");
    }
  }
  return Sampler(Root::kTraceIdRatio, ratio, parent_based);
}

bool trace_id_below_ratio(const TraceId& trace_id, double ratio) {
  if (ratio >= 1.0) return true;
  if (ratio <= 0.0) return false;
  std::uint64_t low = 0;
  for (std::size_t i = 8; i < 16; ++i) low = low << 8 | trace_id[i];
  // ratio < 1, so the bound is below 2^64 and fits.
  const auto bound = static_cast<std::uint64_t>(std::ldexp(ratio, 64));
  return low < bound;
}

bool Sampler::should_sample(const SpanContext* parent, const TraceId& trace_id) const {
  if (parent_based_ && parent != nullptr && parent->valid()) return parent->sampled();
  switch (root_) {
    case Root::kAlwaysOn:
      return true;
    case Root::kAlwaysOff:
      return false;
    case Root::kTraceIdRatio:
      return trace_id_below_ratio(trace_id, ratio_);
  }
  return false;
}

}  // namespace onepass::trace
