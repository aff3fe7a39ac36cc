// The tracer: the sampling decision for each new span, a bounded queue of finished spans and
// one export thread that sends them in batches (the OpenTelemetry SDK's batch span processor).
// Nothing here blocks the caller: record() takes a lock for a push and drops the span, counted,
// when the queue is full; exporting, retrying and waiting for a slow collector happen on the
// export thread only.
//
// One tracer per process, installed by `onepass serve` when an OTLP endpoint is configured
// (install()); hooks call active() first, so with tracing off each hook costs one atomic load.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <span>
#include <thread>
#include <vector>

#include "trace/context.h"
#include "trace/sampler.h"
#include "trace/span.h"

namespace onepass::trace {

// Sends one batch of spans; implemented over OTLP/HTTP by src/otlp. Called on the export thread
// only. Returns true once the collector accepted the batch; retries (when the protocol allows)
// happen inside, and stop at `deadline`.
class Exporter {
 public:
  virtual ~Exporter() = default;
  virtual bool export_spans(std::span<const SpanData> spans,
                            std::chrono::steady_clock::time_point deadline) = 0;
};

// The batch span processor's settings (OTEL_BSP_*: the SDK's defaults).
struct BatchOptions {
  std::size_t max_queue_size = 2048;
  std::size_t max_export_batch_size = 512;
  std::chrono::milliseconds schedule_delay{5000};
  std::chrono::milliseconds export_timeout{30000};
};

// Process-wide counters, read by /metrics whether or not a tracer is installed.
struct Counters {
  std::uint64_t exported = 0;            // spans the collector accepted
  std::uint64_t dropped_queue_full = 0;  // spans recorded while the queue was full
  std::uint64_t dropped_export = 0;      // spans of batches that failed for good
  std::uint64_t export_failures = 0;     // batches that failed for good
};
Counters counters();

class Tracer {
 public:
  Tracer(Sampler sampler, BatchOptions options, std::unique_ptr<Exporter> exporter);
  ~Tracer();  // shutdown() with no time to flush
  Tracer(const Tracer&) = delete;
  Tracer& operator=(const Tracer&) = delete;

  // The context of a new span: a child of `parent` (same trace, its tracestate) when it is
  // valid, else the root of a new trace; sampled as the sampler says.
  SpanContext start(const SpanContext* parent) const;

  // Queues a finished, sampled span for export. Never blocks on export; a full queue drops it.
  void record(SpanData span);

  // Exports everything queued now; true when it all left (or failed for good) before
  // `deadline`. The drain on SIGTERM calls it with what is left of its deadline.
  bool flush(std::chrono::steady_clock::time_point deadline);
  // flush(), then stops the export thread. Later record() calls drop. False when an export was
  // still in flight at `deadline` (a collector slower than the deadline): the thread then ends
  // once that POST returns (OTEL_EXPORTER_OTLP_TIMEOUT at most), and a process about to exit may
  // leave the tracer alive rather than wait for it (cmd_serve.cpp).
  bool shutdown(std::chrono::steady_clock::time_point deadline);

 private:
  void export_loop();

  const Sampler sampler_;
  BatchOptions options_;
  std::unique_ptr<Exporter> exporter_;

  std::mutex mutex_;
  std::condition_variable wake_;      // the export thread: queue full enough, flush, stop
  std::condition_variable progress_;  // flush(): a batch went out
  std::deque<SpanData> queue_;
  bool exporting_ = false;
  std::uint64_t flush_requests_ = 0;
  std::chrono::steady_clock::time_point flush_deadline_ =
      std::chrono::steady_clock::time_point::max();
  bool stopping_ = false;
  bool stopped_ = false;  // the export thread returned
  std::thread thread_;
};

// The process's tracer, or null when tracing is off. install() before serving starts;
// install(nullptr) after the servers stopped (the tracer must outlive every hook's call).
void install(Tracer* tracer);
Tracer* active();

}  // namespace onepass::trace
