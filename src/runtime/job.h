// One admitted request on its way through the runtime: waiting for its model, tokenized, its
// items spread over batches, its outputs gathered, completed once. An item is one sequence, or
// several when a long input is chunked (windows.h); the batcher sees sequences.
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <exception>
#include <memory>
#include <string>
#include <vector>

#include "runtime/loaded_model.h"
#include "runtime/model_registry.h"
#include "runtime/prepare.h"
#include "runtime/service.h"

namespace onepass::runtime {

struct Job {
  using Clock = std::chrono::steady_clock;

  InferenceRequest request;
  Completion done;
  std::string model_name;
  ModelRegistry::SlotRef slot;               // released when the job completes
  std::shared_ptr<const LoadedModel> model;  // set once loaded
  Pooling pooling = Pooling::kMean;          // kPooled: the request's or the model's

  // One per sequence, filled by a tokenizer thread: the items in order, a chunked item's
  // windows one after the other. `sequence_item[s]` is the item sequence s belongs to.
  std::vector<PreparedItem> prepared;
  std::vector<std::size_t> sequence_item;
  bool chunked = false;             // some item has more than one window
  std::vector<ItemOutput> outputs;  // per sequence, written by compute threads, one slot each
  InferenceResult result;           // per item, gathered from `outputs` when the job finishes

  // Set once the job failed; its items still queued are skipped. Written under the
  // scheduler's lock, read by compute threads without it (a stale read only costs work).
  std::atomic<bool> failed{false};
  std::exception_ptr error;  // under the scheduler's lock

  // Under the scheduler's lock.
  std::size_t remaining = 0;  // sequences not yet computed or skipped
  // Sequences [0, next_to_queue) went to the batcher. A chunked job keeps at most half the
  // batch token budget there or running (`tokens_queued`), so that requests arriving after it
  // are batched between its windows instead of behind all of them.
  std::size_t next_to_queue = 0;
  std::size_t tokens_queued = 0;
  bool first_batch_started = false;

  Clock::time_point admitted;
  Clock::time_point tokenize_start;  // a tokenizer thread took the job
  Clock::time_point queued;          // tokenization ended, items entered the batcher
  Clock::time_point compute_start;   // the first batch holding one of its items started
  Clock::time_point compute_end;     // the last one ended
};

using JobRef = std::shared_ptr<Job>;

}  // namespace onepass::runtime
