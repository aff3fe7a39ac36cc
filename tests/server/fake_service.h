// A deterministic InferenceService for the HTTP tests: no engine, outputs computed from the
// input text or ids by a fixed formula (logits(), pooled(), token_vectors()), completions on
// a worker thread like the real runtime, admission by an in-flight count, and a gate that
// holds completions so overload and drain can be tested at exact counts.
#pragma once

#include <atomic>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>
#include <vector>

#include "runtime/service.h"

namespace onepass::testing {

class FakeService : public runtime::InferenceService {
 public:
  FakeService();
  ~FakeService() override;

  // Model set: "nli" (3 labels, entailment 1), "rerank" (1 label), "embed" (hidden 4).
  static std::vector<float> logits(const runtime::InferenceItem& item, int num_labels);
  static std::vector<float> pooled(const runtime::InferenceItem& item);
  static int num_tokens(const runtime::InferenceItem& item);
  static constexpr int kHidden = 4;
  static constexpr int kMaxTokens = 64;

  void set_max_in_flight(std::size_t n) { max_in_flight_ = n; }
  void hold(bool on);  // while on, completions wait
  std::size_t queued() const;
  std::size_t recorded_requests() const;
  void set_ready(bool ready) { ready_flag_ = ready; }
  std::vector<std::string> only_models;  // when non-empty, models() reports only these

  std::vector<runtime::ModelDescription> models() const override;
  std::optional<runtime::ModelDescription> find_model(std::string_view name) const override;
  void submit(runtime::InferenceRequest request, runtime::Completion done) override;
  tokenizer::Encoding tokenize(std::string_view model, std::string_view text,
                               std::optional<std::string_view> pair,
                               bool add_special_tokens) const override;
  // Ids as decimal numbers joined by spaces; the specials 1 and 2 left out on request.
  std::string decode(std::string_view model, std::span<const std::int32_t> ids,
                     bool skip_special_tokens) const override;
  void load_model(const std::string& name, const std::filesystem::path& dir,
                  LoadDone done) override;
  void unload_model(const std::string& name) override;
  bool ready() const override { return ready_flag_ && !draining_; }
  void begin_drain() override { draining_ = true; }
  bool wait_idle(std::chrono::milliseconds timeout) override;
  std::string render_metrics() const override;
  void record_http_request(std::string_view route, std::string_view model, int status,
                           std::chrono::nanoseconds duration) override;

 private:
  runtime::InferenceResult run(const runtime::InferenceRequest& request) const;
  void worker();

  mutable std::mutex mutex_;
  std::condition_variable cv_;
  std::deque<std::pair<runtime::InferenceRequest, runtime::Completion>> queue_;
  std::vector<runtime::ModelDescription> models_;
  std::atomic<std::size_t> in_flight_{0};
  std::atomic<std::size_t> max_in_flight_{512};
  std::atomic<std::size_t> recorded_{0};
  std::atomic<bool> draining_{false};
  std::atomic<bool> ready_flag_{true};
  bool hold_ = false;
  bool stop_ = false;
  std::vector<std::thread> workers_;
};

}  // namespace onepass::testing
