// The runtime's threads: tokenizer threads prepare admitted requests (tokenize, validate), the
// batcher merges their items across requests into per-model queues, and compute threads run
// the forward passes with fair turns across models, scatter each sequence's output back to its
// request and complete every request exactly once.
//
// A bad item never fails its batch: items are validated before batching, a batch whose forward
// pass still throws is rerun one item at a time, and outputs are checked per item (NaN/Inf fail
// only that request, with kBackend).
#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <exception>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "runtime/batcher.h"
#include "runtime/job.h"
#include "runtime/metrics.h"

namespace onepass::runtime {

struct SchedulerOptions {
  BatchLimits limits;
  int compute_threads = 1;
  int tokenizer_threads = 1;
  bool auto_truncate = false;
  // Sequences (items and windows) of a request with chunked inputs; more is kInvalidInput.
  // 0: no limit.
  std::size_t max_windows_per_request = 0;
  // Compute thread k pins its forward passes' teams to the CPUs from k * threads_per_forward on
  // (model/layers/cpu_pinning.h), when pin_threads.
  int threads_per_forward = 1;
  bool pin_threads = false;
  // For the forward passes' spans (kernels::precision_name).
  std::string precision = "fp32";
};

class Scheduler {
 public:
  // Runs once per job, on a runtime thread with no scheduler lock held. The job's result holds
  // either the outputs or the error.
  using OnComplete = std::function<void(const JobRef&)>;

  Scheduler(SchedulerOptions options, Metrics& metrics, OnComplete on_complete);
  ~Scheduler();  // stop()
  Scheduler(const Scheduler&) = delete;
  Scheduler& operator=(const Scheduler&) = delete;

  // A job whose model is loaded (job->model set) enters tokenization.
  void enqueue(const JobRef& job);
  // Completes a job that never reached the scheduler's queues (e.g. its model failed to load).
  void fail(const JobRef& job, std::exception_ptr error);
  // Stops the threads after their current step; every job still queued fails with
  // kUnavailable. Later enqueue() calls fail their job at once.
  void stop();

  // Inputs per model waiting for tokenization or for a batch (`total`), and of those the ones
  // tokenized and waiting in the batcher (`batch`).
  struct Depth {
    std::size_t total = 0;
    std::size_t batch = 0;
  };
  std::map<std::string, Depth> queue_depths() const;

 private:
  struct ItemRef {
    JobRef job;
    std::size_t index = 0;  // the sequence (Job::prepared)
  };
  struct ItemResult {
    bool ok = true;
    std::exception_ptr error;
  };

  void tokenizer_loop();
  void compute_loop(int index);
  // Runs one batch (no lock held); fills `results` per item.
  struct Scratch {  // per compute thread, reused so that steady-state batches do not allocate
    model::ForwardOutput forward;
    std::vector<model::SequenceInput> inputs;
  };
  // Returns the batch's tokens (what the batcher's cost per token divides).
  std::size_t run_batch(const std::vector<ItemRef>& items, Scratch& scratch,
                        std::vector<ItemResult>& results);
  void run_alone(const ItemRef& item, Scratch& scratch, ItemResult& result);
  void finish(const JobRef& job);                                 // no lock held
  void mark_failed(const JobRef& job, std::exception_ptr error);  // under mutex_
  // Under mutex_: fails a job whose deadline is past `now` (counted once); true when it did.
  bool expire(const JobRef& job, std::chrono::steady_clock::time_point now);
  // Under mutex_: moves the job's next sequences into the batcher (all of them, or for a
  // chunked job as many as its share of the token budget allows).
  void queue_sequences(Job& job, const JobRef& ref, std::chrono::steady_clock::time_point now);
  // Under mutex_: one sequence of `job` was computed or skipped; queues the job's next windows,
  // or drops them once it failed, and adds the job to `finished` when nothing is left.
  void sequence_done(const JobRef& job, std::size_t tokens, std::vector<JobRef>& finished);

  SchedulerOptions options_;
  Metrics& metrics_;
  OnComplete on_complete_;

  mutable std::mutex mutex_;
  std::condition_variable tokenize_cv_;
  std::condition_variable compute_cv_;
  std::deque<JobRef> tokenize_queue_;
  Batcher<ItemRef> batcher_;
  std::map<std::string, Depth> depth_;
  bool stopping_ = false;
  std::vector<std::thread> threads_;
};

}  // namespace onepass::runtime
