// What `onepass serve` needs of src/otlp, without the HTTP client's types (whose names the
// server's own share): the tracer the OTEL_* environment and --otlp-endpoint configure.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "trace/tracer.h"

namespace onepass::otlp {

// An environment variable's value, or nullopt when unset (tests pass a map).
using Environment = std::function<std::optional<std::string>(const char* name)>;
Environment process_environment();

// For the start-up log line; never the headers (they carry collectors' API keys).
struct TracingSummary {
  std::string endpoint;
  std::string protocol;  // http/protobuf or http/json
  std::string sampler;   // OTEL_TRACES_SAMPLER's name
  double ratio = 1.0;
};

// The tracer config.h's tracing_config describes, or null when tracing is off. Throws like
// tracing_config.
std::unique_ptr<trace::Tracer> tracer_from_environment(std::string_view flag_endpoint,
                                                       const Environment& environment,
                                                       TracingSummary* summary = nullptr);

}  // namespace onepass::otlp
