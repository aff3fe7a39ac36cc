#include "trace/tracer.h"

#include <algorithm>
#include <atomic>

namespace onepass::trace {
namespace {

using Clock = std::chrono::steady_clock;

std::atomic<Tracer*> g_tracer{nullptr};
std::atomic<std::uint64_t> g_exported{0};
std::atomic<std::uint64_t> g_dropped_queue_full{0};
std::atomic<std::uint64_t> g_dropped_export{0};
std::atomic<std::uint64_t> g_export_failures{0};

}  // namespace

Counters counters() {
  Counters c;
  c.exported = g_exported.load(std::memory_order_relaxed);
  c.dropped_queue_full = g_dropped_queue_full.load(std::memory_order_relaxed);
  c.dropped_export = g_dropped_export.load(std::memory_order_relaxed);
  c.export_failures = g_export_failures.load(std::memory_order_relaxed);
  return c;
}

void install(Tracer* tracer) { g_tracer.store(tracer, std::memory_order_release); }
Tracer* active() { return g_tracer.load(std::memory_order_acquire); }

Tracer::Tracer(Sampler sampler, BatchOptions options, std::unique_ptr<Exporter> exporter)
    : sampler_(sampler), options_(options), exporter_(std::move(exporter)) {
  options_.max_export_batch_size = std::max<std::size_t>(options_.max_export_batch_size, 1);
  thread_ = std::thread([this] { export_loop(); });
}

Tracer::~Tracer() {
  Tracer* self = this;
  g_tracer.compare_exchange_strong(self, nullptr);  // no hook may find it any more
  if (!shutdown(Clock::now()) && thread_.joinable()) thread_.join();
}

SpanContext Tracer::start(const SpanContext* parent) const {
  SpanContext context;
  const bool child = parent != nullptr && parent->valid();
  context.trace_id = child ? parent->trace_id : random_trace_id();
  context.span_id = random_span_id();
  if (child) context.trace_state = parent->trace_state;
  context.flags = sampler_.should_sample(parent, context.trace_id) ? kSampledFlag : 0;
  return context;
}

void Tracer::record(SpanData span) {
  {
    std::lock_guard lock(mutex_);
    if (!stopping_ && queue_.size() < options_.max_queue_size) {
      queue_.push_back(std::move(span));
      if (queue_.size() == options_.max_export_batch_size) wake_.notify_one();
      return;
    }
  }
  g_dropped_queue_full.fetch_add(1, std::memory_order_relaxed);
}

bool Tracer::flush(Clock::time_point deadline) {
  std::unique_lock lock(mutex_);
  if (!thread_.joinable()) return queue_.empty();
  ++flush_requests_;
  flush_deadline_ = deadline;
  wake_.notify_one();
  const bool done =
      progress_.wait_until(lock, deadline, [&] { return queue_.empty() && !exporting_; });
  flush_deadline_ = Clock::time_point::max();
  return done;
}

bool Tracer::shutdown(Clock::time_point deadline) {
  flush(deadline);
  {
    std::unique_lock lock(mutex_);
    stopping_ = true;
    // Whatever the deadline left behind is lost, and counted.
    g_dropped_queue_full.fetch_add(queue_.size(), std::memory_order_relaxed);
    queue_.clear();
    wake_.notify_all();
    if (!progress_.wait_until(lock, deadline, [&] { return stopped_; }) && thread_.joinable())
      return false;
  }
  if (thread_.joinable()) thread_.join();
  return true;
}

void Tracer::export_loop() {
  std::vector<SpanData> batch;
  std::uint64_t flushes_seen = 0;
  std::unique_lock lock(mutex_);
  for (;;) {
    const auto due = Clock::now() + options_.schedule_delay;
    wake_.wait_until(lock, due, [&] {
      return stopping_ || flush_requests_ != flushes_seen ||
             queue_.size() >= options_.max_export_batch_size;
    });
    if (stopping_) break;
    flushes_seen = flush_requests_;
    // Everything queued goes out now, a batch at a time (a flush waits for all of it).
    while (!queue_.empty() && !stopping_) {
      const std::size_t n = std::min(queue_.size(), options_.max_export_batch_size);
      batch.assign(std::make_move_iterator(queue_.begin()),
                   std::make_move_iterator(queue_.begin() + static_cast<std::ptrdiff_t>(n)));
      queue_.erase(queue_.begin(), queue_.begin() + static_cast<std::ptrdiff_t>(n));
      exporting_ = true;
      const auto deadline = std::min(flush_deadline_, Clock::now() + options_.export_timeout);
      lock.unlock();
      bool ok = false;
      try {
        ok = exporter_->export_spans(batch, deadline);
      } catch (...) {
        ok = false;  // an exporter bug must not end the thread
      }
      if (ok) {
        g_exported.fetch_add(batch.size(), std::memory_order_relaxed);
      } else {
        g_dropped_export.fetch_add(batch.size(), std::memory_order_relaxed);
        g_export_failures.fetch_add(1, std::memory_order_relaxed);
      }
      batch.clear();
      lock.lock();
      exporting_ = false;
      progress_.notify_all();
    }
    progress_.notify_all();
  }
  stopped_ = true;
  progress_.notify_all();
}

}  // namespace onepass::trace
