// Tracing's configuration from the OpenTelemetry SDK's environment variables
// (https://opentelemetry.io/docs/specs/otel/configuration/sdk-environment-variables/) and
// `onepass serve --otlp-endpoint`. Tracing is on only when an endpoint is given and neither
// OTEL_SDK_DISABLED=true nor OTEL_TRACES_EXPORTER=none says otherwise.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "otlp/exporter.h"
#include "otlp/setup.h"
#include "trace/sampler.h"
#include "trace/tracer.h"

namespace onepass::otlp {

struct TracingConfig {
  bool enabled = false;
  ExporterOptions exporter;
  trace::Sampler sampler;
  trace::BatchOptions batch;
  std::string endpoint;  // the URL spans go to, for the start-up line (headers never logged)
};

// `flag_endpoint` (--otlp-endpoint, empty when not given) is a base URL like
// OTEL_EXPORTER_OTLP_ENDPOINT, and wins over both endpoint variables; /v1/traces is appended to
// a base URL, OTEL_EXPORTER_OTLP_TRACES_ENDPOINT is used as it is. Throws Error
// (kInvalidArgument) naming the variable for a value it cannot use (a malformed URL or number,
// grpc, an unknown sampler).
TracingConfig tracing_config(std::string_view flag_endpoint, const Environment& environment);

std::unique_ptr<trace::Tracer> make_tracer(const TracingConfig& config);

}  // namespace onepass::otlp
