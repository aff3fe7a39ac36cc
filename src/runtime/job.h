// One admitted request on its way through the runtime: waiting for its model, tokenized, its
// items spread over batches, its outputs gathered, completed once.
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

  std::vector<PreparedItem> prepared;  // one per item, filled by a tokenizer thread
  InferenceResult result;              // items written by compute threads, one slot each

  // Set once the job failed; its items still queued are skipped. Written under the
  // scheduler's lock, read by compute threads without it (a stale read only costs work).
  std::atomic<bool> failed{false};
  std::exception_ptr error;  // under the scheduler's lock

  // Under the scheduler's lock.
  std::size_t remaining = 0;  // items not yet computed or skipped
  bool first_batch_started = false;

  Clock::time_point admitted;
  Clock::time_point queued;         // tokenization ended, items entered the batcher
  Clock::time_point compute_start;  // the first batch holding one of its items started
  Clock::time_point compute_end;    // the last one ended
};

using JobRef = std::shared_ptr<Job>;

}  // namespace onepass::runtime
