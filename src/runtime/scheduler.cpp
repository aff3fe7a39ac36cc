#include "runtime/scheduler.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>
#include <string>

#include "base/error.h"
#include "model/layers/cpu_pinning.h"
#include "runtime/fill_mask.h"
#include "runtime/finish_outputs.h"
#include "runtime/outputs.h"
#include "runtime/spans.h"
#include "runtime/windows.h"
#include "trace/tracer.h"

namespace onepass::runtime {
namespace {

using Clock = std::chrono::steady_clock;

// What the token-classification pipeline needs to know of a fast tokenizer: its sub-word
// prefix, whether its decoder is byte-level BPE's or SentencePiece's Metaspace (assumed for
// any other tokenizer without a prefix), and its unknown token's id.
model::heads::TokenTextStyle token_text_style(const tokenizer::Tokenizer& tok) {
  model::heads::TokenTextStyle style;
  style.continuing_subword_prefix = std::string(tok.continuing_subword_prefix());
  style.byte_level = tok.byte_level_decoder();
  style.metaspace = style.continuing_subword_prefix.empty() && !style.byte_level;
  style.unk_token_id = tok.token_to_id("[UNK]");
  if (!style.unk_token_id) style.unk_token_id = tok.token_to_id("<unk>");
  return style;
}

std::exception_ptr shutting_down() {
  return std::make_exception_ptr(Error(ErrorKind::kUnavailable, "the server is shutting down"));
}

std::exception_ptr deadline_passed() {
  return std::make_exception_ptr(Error(ErrorKind::kDeadlineExceeded,
                                       "the deadline passed while the request waited; it was "
                                       "dropped before its forward pass"));
}

std::exception_ptr non_finite_output() {
  return std::make_exception_ptr(
      Error(ErrorKind::kBackend, "the model produced a NaN or infinite value for this input"));
}

}  // namespace

Scheduler::Scheduler(SchedulerOptions options, Metrics& metrics, OnComplete on_complete)
    : options_(options),
      metrics_(metrics),
      on_complete_(std::move(on_complete)),
      batcher_(options.limits) {
  ONEPASS_CHECK(options_.compute_threads >= 1 && options_.tokenizer_threads >= 1,
                "at least one thread of each kind");
  for (int i = 0; i < options_.tokenizer_threads; ++i) {
    threads_.emplace_back([this] { tokenizer_loop(); });
  }
  for (int i = 0; i < options_.compute_threads; ++i) {
    threads_.emplace_back([this, i] { compute_loop(i); });
  }
}

Scheduler::~Scheduler() { stop(); }

void Scheduler::stop() {
  {
    std::lock_guard lock(mutex_);
    if (stopping_ && threads_.empty()) return;
    stopping_ = true;
  }
  tokenize_cv_.notify_all();
  compute_cv_.notify_all();
  for (auto& t : threads_) t.join();
  threads_.clear();

  // No thread runs now: fail what is left, each job once.
  std::vector<JobRef> left;
  {
    std::lock_guard lock(mutex_);
    std::set<Job*> seen;
    for (auto& job : tokenize_queue_) {
      if (seen.insert(job.get()).second) left.push_back(job);
    }
    tokenize_queue_.clear();
    for (auto& item : batcher_.remove_if([](const ItemRef&) { return true; })) {
      if (seen.insert(item.job.get()).second) left.push_back(item.job);
    }
    depth_.clear();
    for (auto& job : left) mark_failed(job, shutting_down());
  }
  for (auto& job : left) finish(job);
}

void Scheduler::enqueue(const JobRef& job) {
  ONEPASS_CHECK(job->model != nullptr, "an enqueued job has its model");
  {
    std::lock_guard lock(mutex_);
    if (!stopping_) {
      depth_[job->model_name].total += job->request.items.size();
      tokenize_queue_.push_back(job);
      tokenize_cv_.notify_one();
      return;
    }
    mark_failed(job, shutting_down());
  }
  finish(job);
}

void Scheduler::fail(const JobRef& job, std::exception_ptr error) {
  {
    std::lock_guard lock(mutex_);
    mark_failed(job, std::move(error));
  }
  finish(job);
}

void Scheduler::mark_failed(const JobRef& job, std::exception_ptr error) {
  if (job->failed.load(std::memory_order_relaxed)) return;  // the first error wins
  job->error = std::move(error);
  job->failed.store(true, std::memory_order_relaxed);
}

bool Scheduler::expire(const JobRef& job, Clock::time_point now) {
  const auto& deadline = job->request.deadline;
  if (!deadline || *deadline > now || job->failed.load(std::memory_order_relaxed)) return false;
  mark_failed(job, deadline_passed());
  metrics_.record_expired(job->model_name);
  return true;
}

std::map<std::string, Scheduler::Depth> Scheduler::queue_depths() const {
  std::lock_guard lock(mutex_);
  return depth_;
}

void Scheduler::tokenizer_loop() {
  std::unique_lock lock(mutex_);
  for (;;) {
    tokenize_cv_.wait(lock, [&] { return stopping_ || !tokenize_queue_.empty(); });
    if (stopping_) return;
    JobRef job = std::move(tokenize_queue_.front());
    tokenize_queue_.pop_front();
    if (expire(job, Clock::now())) {  // not worth tokenizing either
      auto& depth = depth_[job->model_name].total;
      depth -= std::min(depth, job->request.items.size());
      lock.unlock();
      finish(job);
      lock.lock();
      continue;
    }
    lock.unlock();

    const auto start = Clock::now();
    job->tokenize_start = start;
    std::exception_ptr error;
    try {
      job->prepared.reserve(job->request.items.size());
      for (std::size_t i = 0; i < job->request.items.size(); ++i) {
        auto sequences =
            prepare_item(*job->model, job->request, job->request.items[i], options_.auto_truncate);
        job->chunked |= sequences.size() > 1;
        for (auto& sequence : sequences) {
          job->prepared.push_back(std::move(sequence));
          job->sequence_item.push_back(i);
        }
      }
      const std::size_t limit = options_.max_windows_per_request;
      if (job->chunked && limit != 0 && job->prepared.size() > limit) {
        throw Error(ErrorKind::kInvalidInput,
                    "the inputs need " + std::to_string(job->prepared.size()) +
                        " windows, more than the " + std::to_string(limit) +
                        " allowed per request (--max-client-batch-size counts windows); "
                        "shorten the text, raise the limit or enable truncation");
      }
    } catch (...) {
      error = std::current_exception();
    }
    const auto end = Clock::now();
    job->result.timings.tokenization = end - start;

    lock.lock();
    const std::size_t n = job->request.items.size();
    if (error || stopping_) {
      auto& depth = depth_[job->model_name].total;
      depth -= std::min(depth, n);
      mark_failed(job, error ? error : shutting_down());
      lock.unlock();
      finish(job);
      lock.lock();
      continue;
    }
    const std::size_t sequences = job->prepared.size();
    job->queued = end;
    job->remaining = sequences;
    job->outputs.resize(sequences);
    depth_[job->model_name].total += sequences - n;  // the windows beyond one per item
    queue_sequences(*job, job, end);
    compute_cv_.notify_one();
  }
}

void Scheduler::queue_sequences(Job& job, const JobRef& ref, Clock::time_point now) {
  // A chunked job's share: half the budget, the other half left to whatever arrives meanwhile;
  // always at least one window, so that it progresses.
  const std::size_t share = job.chunked
                                ? std::max<std::size_t>(options_.limits.max_batch_tokens / 2, 1)
                                : std::numeric_limits<std::size_t>::max();
  Depth& depth = depth_[job.model_name];
  while (job.next_to_queue < job.prepared.size()) {
    const std::size_t tokens = job.prepared[job.next_to_queue].input_ids.size();
    if (job.tokens_queued != 0 && job.tokens_queued + tokens > share) break;
    job.tokens_queued += tokens;
    batcher_.push(job.model->instance_id, ItemRef{ref, job.next_to_queue}, tokens, now);
    ++job.next_to_queue;
    ++depth.batch;
  }
}

void Scheduler::sequence_done(const JobRef& ref, std::size_t tokens,
                              std::vector<JobRef>& finished) {
  Job& job = *ref;
  job.tokens_queued -= std::min(job.tokens_queued, tokens);
  --job.remaining;
  if (job.failed.load(std::memory_order_relaxed)) {
    // Windows never queued are dropped with the request.
    const std::size_t dropped = job.prepared.size() - job.next_to_queue;
    job.next_to_queue = job.prepared.size();
    job.remaining -= dropped;
    auto& depth = depth_[job.model_name].total;
    depth -= std::min(depth, dropped);
  } else if (job.next_to_queue < job.prepared.size()) {
    queue_sequences(job, ref, Clock::now());
    compute_cv_.notify_one();
  }
  if (job.remaining == 0) finished.push_back(ref);
}

void Scheduler::compute_loop(int index) {
  if (options_.pin_threads) model::pin_forward_teams(index * options_.threads_per_forward);
  Scratch scratch;
  std::vector<ItemRef> live;
  std::vector<ItemResult> results;
  std::vector<JobRef> finished;
  std::unique_lock lock(mutex_);
  for (;;) {
    if (stopping_) return;
    Clock::time_point wake;
    auto batch = batcher_.next(Clock::now(), &wake);
    if (!batch) {
      if (wake == Clock::time_point::max()) {
        compute_cv_.wait(lock);
      } else {
        compute_cv_.wait_until(lock, wake);
      }
      continue;
    }
    // Another compute thread may find more work while this one runs.
    if (!batcher_.empty()) compute_cv_.notify_one();

    live.clear();
    finished.clear();
    const auto start = Clock::now();
    for (ItemRef& item : batch->items) {
      Job& job = *item.job;
      Depth& depth = depth_[job.model_name];
      depth.total -= std::min<std::size_t>(depth.total, 1);
      depth.batch -= std::min<std::size_t>(depth.batch, 1);
      expire(item.job, start);
      if (job.failed.load(std::memory_order_relaxed)) {
        // Its request already failed: skip the work, count the sequence as done.
        sequence_done(item.job, job.prepared[item.index].input_ids.size(), finished);
        continue;
      }
      if (!job.first_batch_started) {
        job.first_batch_started = true;
        job.compute_start = start;
      }
      live.push_back(std::move(item));
    }
    lock.unlock();

    for (auto& job : finished) finish(job);
    finished.clear();
    const std::size_t tokens = live.empty() ? 0 : run_batch(live, scratch, results);
    const auto end = Clock::now();
    if (!live.empty() && trace::active() != nullptr) {
      const LoadedModel& model = *live.front().job->model;
      std::vector<const Job*> jobs;
      for (const ItemRef& item : live) jobs.push_back(item.job.get());
      record_batch_span({model.description.name, model.description.info.architecture,
                         options_.precision, live.size(), tokens, start, end},
                        jobs);
    }

    lock.lock();
    if (!live.empty())
      batcher_.record_cost(live.front().job->model->instance_id, tokens, end - start);
    for (std::size_t i = 0; i < live.size(); ++i) {
      Job& job = *live[i].job;
      if (!results[i].ok) mark_failed(live[i].job, results[i].error);
      job.compute_end = end;
      sequence_done(live[i].job, job.prepared[live[i].index].input_ids.size(), finished);
    }
    if (!finished.empty()) {
      lock.unlock();
      for (auto& job : finished) finish(job);
      lock.lock();
    }
  }
}

std::size_t Scheduler::run_batch(const std::vector<ItemRef>& items, Scratch& scratch,
                                 std::vector<ItemResult>& results) {
  results.assign(items.size(), ItemResult{});
  const LoadedModel& model = *items.front().job->model;
  std::vector<model::SequenceInput>& inputs = scratch.inputs;
  inputs.clear();
  std::size_t tokens = 0;
  for (const ItemRef& item : items) {
    const PreparedItem& p = item.job->prepared[item.index];
    inputs.push_back(
        model::SequenceInput{p.input_ids, p.token_type_ids, p.mask_positions, p.word_positions});
    tokens += p.input_ids.size();
  }
  try {
    model.encoder->forward(inputs, scratch.forward);
  } catch (...) {
    // Validation should have caught a bad input; if the engine still refuses the batch, find
    // the culprit by running each item alone so that the others are served.
    if (items.size() == 1) {
      results[0] = ItemResult{false, std::current_exception()};
      return tokens;
    }
    for (std::size_t i = 0; i < items.size(); ++i) run_alone(items[i], scratch, results[i]);
    return tokens;
  }
  metrics_.record_batch(items.front().job->model_name, items.size(), tokens);
  std::size_t position_row = 0;  // the first row of the next sequence in position_logits
  for (std::size_t i = 0; i < items.size(); ++i) {
    Job& job = *items[i].job;
    ItemOutput& out = job.outputs[items[i].index];
    out.num_tokens = static_cast<int>(inputs[i].input_ids.size());
    if (job.request.output == OutputKind::kTokenLogits) {
      out.encoding = job.prepared[items[i].index].encoding;
      out.token_style = token_text_style(*model.tokenizer);
    }
    if (job.request.output == OutputKind::kSpans) out.words = job.prepared[items[i].index].words;
    const std::size_t positions = inputs[i].vocab_logit_positions.size();
    position_row += positions;
    try {
      if (job.request.output == OutputKind::kFillMask) {
        const PreparedItem& p = job.prepared[items[i].index];
        const auto vocab = static_cast<std::size_t>(model.description.info.vocab_size);
        const float* logits =
            scratch.forward.position_logits.data() + (position_row - positions) * vocab;
        if (!std::all_of(logits, logits + positions * vocab,
                         [](float v) { return std::isfinite(v); })) {
          results[i] = ItemResult{false, non_finite_output()};
          continue;
        }
        out.predictions = fill_mask_predictions(model, p.input_ids, p.mask_positions, p.target_ids,
                                                job.request.fill_mask.top_k, logits);
        continue;
      }
      if (!extract_output(model.description.info, job.request.output, job.pooling, model.dense,
                          scratch.forward, i, out)) {
        results[i] = ItemResult{false, non_finite_output()};
      }
    } catch (...) {
      results[i] = ItemResult{false, std::current_exception()};
    }
  }
  return tokens;
}

void Scheduler::run_alone(const ItemRef& item, Scratch& scratch, ItemResult& result) {
  std::vector<ItemRef> one{item};
  std::vector<ItemResult> results;
  run_batch(one, scratch, results);
  result = results[0];
}

void Scheduler::finish(const JobRef& job) {
  InferenceResult& result = job->result;
  if (job->failed.load(std::memory_order_relaxed)) {
    result.items.clear();
    result.error = job->error;
    result.total_tokens = 0;
  } else {
    // Gather the sequences into items: one moves over, a chunked item's windows combine.
    result.items.assign(job->request.items.size(), ItemOutput{});
    for (std::size_t s = 0; s < job->outputs.size(); ++s) {
      ItemOutput& item = result.items[job->sequence_item[s]];
      const bool alone =
          (s == 0 || job->sequence_item[s - 1] != job->sequence_item[s]) &&
          (s + 1 == job->outputs.size() || job->sequence_item[s + 1] != job->sequence_item[s]);
      if (alone) {
        item = std::move(job->outputs[s]);
      } else {
        item.windows.push_back(
            WindowOutput{std::move(job->outputs[s].values), job->outputs[s].num_tokens});
      }
    }
    for (ItemOutput& item : result.items) {
      if (!item.windows.empty()) combine_windows(item);
    }
    finish_outputs(job->request, result.items);
    result.total_tokens = 0;
    for (const ItemOutput& item : result.items) {
      result.total_tokens += static_cast<std::size_t>(item.num_tokens);
    }
    result.timings.inference = job->compute_end - job->compute_start;
  }
  if (job->first_batch_started) {
    const auto waited = job->compute_start - job->admitted - result.timings.tokenization;
    result.timings.queue = std::max(waited, Clock::duration::zero());
  }
  if (job->request.trace.sampled() && trace::active() != nullptr) record_job_spans(*job);
  on_complete_(job);
}

}  // namespace onepass::runtime
