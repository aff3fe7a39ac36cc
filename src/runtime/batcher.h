// The dynamic batching policy, free of threads, locks and clocks (the caller passes `now`), so
// that tests drive it with a fake clock. One FIFO queue per model; each call to next() serves
// the next due queue in round-robin order, so a flooded model cannot starve another. A batch
// takes queued inputs in order while they fit the token budget and the input count; inputs are
// never padded, so the budget counts real tokens. An input longer than the whole budget runs
// alone rather than never. While other models have traffic, a model's batch is also cut to about
// BatchLimits::max_turn of compute, by its measured cost per token (record_cost): one compute
// thread serves every model, so a flooded large model's batch is what a small model's request
// waits for.
//
// Not thread-safe: the scheduler holds its lock around every call.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <utility>
#include <vector>

#include "runtime/serve_defaults.h"

namespace onepass::runtime {

struct BatchLimits {
  std::size_t max_batch_tokens = kDefaultMaxBatchTokens;
  std::size_t max_batch_items = kDefaultMaxBatchRequests;
  // A queue becomes due once its oldest input waited this long, or once it holds a full batch.
  // 0: due as soon as it holds anything.
  std::chrono::nanoseconds max_wait{0};
  // While another model pushed inputs within the last kCoHostedWindow, one batch takes at most
  // about this much compute (at least one input). 0: no cut.
  std::chrono::nanoseconds max_turn{0};
};

// How recent another model's traffic must be for max_turn to apply.
inline constexpr std::chrono::seconds kCoHostedWindow{10};

template <class T>
class Batcher {
 public:
  using TimePoint = std::chrono::steady_clock::time_point;
  using QueueId = std::uint64_t;

  struct Batch {
    QueueId queue = 0;
    std::vector<T> items;
    std::size_t tokens = 0;
  };

  explicit Batcher(BatchLimits limits) : limits_(limits) {
    if (limits_.max_batch_items == 0) limits_.max_batch_items = 1;
    if (limits_.max_batch_tokens == 0) limits_.max_batch_tokens = 1;
  }

  const BatchLimits& limits() const { return limits_; }

  void push(QueueId queue, T item, std::size_t tokens, TimePoint now) {
    last_push_[queue] = now;
    Queue& q = queues_[queue];
    q.entries.push_back(Entry{std::move(item), tokens, now});
    q.tokens += tokens;
    ++total_items_;
  }

  // The next batch due at `now`, or nullopt. Then `*wake_at` (when given) is the earliest time
  // a queue becomes due by waiting (TimePoint::max() when nothing is queued).
  std::optional<Batch> next(TimePoint now, TimePoint* wake_at = nullptr) {
    forget_quiet(now);
    TimePoint earliest = TimePoint::max();
    if (!queues_.empty()) {
      // Round robin: start at the first queue after the one served last.
      auto start = queues_.upper_bound(last_served_);
      for (std::size_t n = 0; n < queues_.size(); ++n, ++start) {
        if (start == queues_.end()) start = queues_.begin();
        Queue& q = start->second;
        if (q.entries.empty()) continue;
        const TimePoint due = q.entries.front().enqueued + limits_.max_wait;
        const bool full =
            q.tokens >= limits_.max_batch_tokens || q.entries.size() >= limits_.max_batch_items;
        if (full || due <= now) {
          last_served_ = start->first;
          return take(start->first, q, turn_tokens(start->first));
        }
        earliest = std::min(earliest, due);
      }
    }
    if (wake_at) *wake_at = earliest;
    return std::nullopt;
  }

  // Removes the queued inputs for which `drop(item)` is true (e.g. of a request that already
  // failed) and returns them.
  template <class Pred>
  std::vector<T> remove_if(Pred drop) {
    std::vector<T> removed;
    for (auto& [id, q] : queues_) {
      for (auto it = q.entries.begin(); it != q.entries.end();) {
        if (drop(it->item)) {
          q.tokens -= it->tokens;
          --total_items_;
          removed.push_back(std::move(it->item));
          it = q.entries.erase(it);
        } else {
          ++it;
        }
      }
    }
    prune();
    return removed;
  }

  std::size_t queued_items(QueueId queue) const {
    auto it = queues_.find(queue);
    return it == queues_.end() ? 0 : it->second.entries.size();
  }
  std::size_t queued_tokens(QueueId queue) const {
    auto it = queues_.find(queue);
    return it == queues_.end() ? 0 : it->second.tokens;
  }
  std::size_t total_items() const { return total_items_; }

  // A batch of `tokens` from `queue` took `elapsed` of compute: the cost per token that max_turn
  // divides, a moving average over the queue's recent batches.
  void record_cost(QueueId queue, std::size_t tokens, std::chrono::nanoseconds elapsed) {
    if (tokens == 0) return;
    const double per_token = static_cast<double>(elapsed.count()) / static_cast<double>(tokens);
    auto [it, fresh] = cost_per_token_ns_.try_emplace(queue, per_token);
    if (!fresh) it->second = 0.75 * it->second + 0.25 * per_token;
  }
  bool empty() const { return total_items_ == 0; }

 private:
  struct Entry {
    T item;
    std::size_t tokens;
    TimePoint enqueued;
  };
  struct Queue {
    std::deque<Entry> entries;
    std::size_t tokens = 0;
  };

  // The token budget of `id`'s next batch: max_batch_tokens, cut to max_turn of compute while
  // another model had traffic within kCoHostedWindow (last_push_ holds only those: next() runs
  // forget_quiet first) and this one's cost is known.
  std::size_t turn_tokens(QueueId id) const {
    std::size_t budget = limits_.max_batch_tokens;
    if (limits_.max_turn.count() <= 0) return budget;
    const auto cost = cost_per_token_ns_.find(id);
    if (cost == cost_per_token_ns_.end() || cost->second <= 0.0) return budget;
    const bool others = std::any_of(last_push_.begin(), last_push_.end(),
                                    [&](const auto& entry) { return entry.first != id; });
    if (!others) return budget;
    const double turn = static_cast<double>(limits_.max_turn.count()) / cost->second;
    return std::max<std::size_t>(
        1, static_cast<std::size_t>(std::min(static_cast<double>(budget), turn)));
  }

  // Forgets the models with no input for kCoHostedWindow and nothing queued, cost included
  // (models come and go under multi-model endpoints): a model back from quiet is measured anew
  // by its first batch.
  void forget_quiet(TimePoint now) {
    for (auto it = last_push_.begin(); it != last_push_.end();) {
      const bool quiet = now - it->second > kCoHostedWindow && !queues_.count(it->first);
      it = quiet ? last_push_.erase(it) : std::next(it);
    }
    for (auto it = cost_per_token_ns_.begin(); it != cost_per_token_ns_.end();) {
      const bool forgotten = !last_push_.count(it->first) && !queues_.count(it->first);
      it = forgotten ? cost_per_token_ns_.erase(it) : std::next(it);
    }
  }

  Batch take(QueueId id, Queue& q, std::size_t token_budget) {
    Batch batch;
    batch.queue = id;
    while (!q.entries.empty() && batch.items.size() < limits_.max_batch_items) {
      Entry& front = q.entries.front();
      if (!batch.items.empty() && batch.tokens + front.tokens > token_budget) break;
      batch.tokens += front.tokens;
      q.tokens -= front.tokens;
      batch.items.push_back(std::move(front.item));
      q.entries.pop_front();
      --total_items_;
      // Once over budget (a lone long input), nothing else joins.
      if (batch.tokens >= token_budget) break;
    }
    if (q.entries.empty()) queues_.erase(id);
    return batch;
  }

  void prune() {
    for (auto it = queues_.begin(); it != queues_.end();) {
      it = it->second.entries.empty() ? queues_.erase(it) : std::next(it);
    }
  }

  BatchLimits limits_;
  std::map<QueueId, Queue> queues_;  // ordered, so round robin visits ids in a stable order
  QueueId last_served_ = 0;
  std::size_t total_items_ = 0;
  std::map<QueueId, TimePoint> last_push_;       // each model's latest input, while recent
  std::map<QueueId, double> cost_per_token_ns_;  // record_cost's moving average
};

}  // namespace onepass::runtime
