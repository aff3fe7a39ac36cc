#include "otlp/exporter.h"

#include <algorithm>
#include <charconv>
#include <random>
#include <thread>

#include "base/log.h"
#include "base/version.h"

namespace onepass::otlp {
namespace {

using Clock = std::chrono::steady_clock;

// Retry-After as delta-seconds (an HTTP date is not worth parsing here); nullopt otherwise.
std::optional<std::chrono::milliseconds> retry_after(const http::Response& response) {
  const std::string value = response.header("retry-after");
  unsigned seconds = 0;
  const auto [end, error] = std::from_chars(value.data(), value.data() + value.size(), seconds);
  if (value.empty() || error != std::errc() || end != value.data() + value.size())
    return std::nullopt;
  return std::chrono::milliseconds(std::min(seconds, 3600u) * 1000LL);
}

std::chrono::milliseconds jittered(std::chrono::milliseconds backoff) {
  thread_local std::mt19937 engine{std::random_device{}()};
  std::uniform_real_distribution<double> factor(0.8, 1.2);
  return std::chrono::milliseconds(
      static_cast<long long>(static_cast<double>(backoff.count()) * factor(engine)));
}

}  // namespace

bool retryable_status(int status) {
  return status == 429 || status == 502 || status == 503 || status == 504;
}

HttpExporter::HttpExporter(ExporterOptions options) : options_(std::move(options)) {}
HttpExporter::~HttpExporter() = default;

bool HttpExporter::export_spans(std::span<const trace::SpanData> spans,
                                Clock::time_point deadline) {
  http::Request request;
  request.method = "POST";
  request.target = options_.url.prefix.empty() ? "/" : "";
  request.headers = options_.headers;
  request.headers.emplace_back("User-Agent", "onepass-otlp/" + std::string(onepass::version()));
  if (options_.protocol == Protocol::kHttpJson) {
    request.headers.emplace_back("Content-Type", "application/json");
    request.body = encode_json(options_.resource, spans);
  } else {
    request.headers.emplace_back("Content-Type", "application/x-protobuf");
    request.body = encode_protobuf(options_.resource, spans);
  }
  auto backoff = options_.initial_backoff;
  for (int attempt = 0;; ++attempt) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    if (left.count() <= 0) return false;
    std::optional<std::chrono::milliseconds> wait;
    std::string failure;
    try {
      // The connection's timeout is fixed when it is made: a new one whenever less time is
      // left than a whole POST may take.
      const auto timeout = std::min(options_.timeout, left);
      if (!connection_ || timeout < options_.timeout)
        connection_ = std::make_unique<http::Connection>(options_.url, timeout);
      const http::Response response = connection_->send(request);
      if (response.status >= 200 && response.status < 300) return true;
      failure = "status " + std::to_string(response.status);
      if (!retryable_status(response.status)) {
        log::warn("trace_export", log::Fields().add("error", failure).add("spans", spans.size()));
        return false;
      }
      wait = retry_after(response);
    } catch (const std::exception& e) {
      connection_.reset();
      failure = e.what();
    }
    const auto pause = wait.value_or(jittered(backoff));
    backoff = std::min(backoff * 2, options_.max_backoff);
    if (Clock::now() + pause >= deadline) {
      log::warn("trace_export", log::Fields()
                                    .add("error", failure)
                                    .add("attempts", attempt + 1)
                                    .add("spans", spans.size()));
      return false;
    }
    std::this_thread::sleep_for(pause);
  }
}

}  // namespace onepass::otlp
