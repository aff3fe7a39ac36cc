// OTLP/HTTP export of trace spans (https://opentelemetry.io/docs/specs/otlp/#otlphttp): one POST
// of an ExportTraceServiceRequest per batch, protobuf or JSON, through the HTTP client. A 2xx
// answer is success; 429, 502, 503 and 504 (and a failed connection) are retried with
// exponential backoff and jitter, or after the Retry-After the collector asks for, until the
// batch's deadline; any other status fails the batch at once. Runs on the tracer's export thread
// only.
#pragma once

#include <chrono>
#include <memory>
#include <string>

#include "http/client.h"
#include "otlp/encode.h"
#include "trace/tracer.h"

namespace onepass::otlp {

enum class Protocol { kHttpProtobuf, kHttpJson };

struct ExporterOptions {
  http::Url url;          // scheme, host, port; its prefix is the whole path ("/v1/traces")
  http::Headers headers;  // OTEL_EXPORTER_OTLP_HEADERS; never logged (they carry API keys)
  Protocol protocol = Protocol::kHttpProtobuf;
  std::chrono::milliseconds timeout{10000};  // each POST (OTEL_EXPORTER_OTLP_TIMEOUT)
  Resource resource;
  // Backoff before the first retry, doubled for each later one up to max_backoff.
  std::chrono::milliseconds initial_backoff{200};
  std::chrono::milliseconds max_backoff{5000};
};

// Whether an OTLP/HTTP status may succeed when sent again (the specification's list).
bool retryable_status(int status);

class HttpExporter final : public trace::Exporter {
 public:
  explicit HttpExporter(ExporterOptions options);
  ~HttpExporter() override;
  bool export_spans(std::span<const trace::SpanData> spans,
                    std::chrono::steady_clock::time_point deadline) override;

 private:
  ExporterOptions options_;
  std::unique_ptr<http::Connection> connection_;  // kept alive between batches
};

}  // namespace onepass::otlp
