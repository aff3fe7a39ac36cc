// A runtime::InferenceService without an engine, shared by the API tests (tests/server, behind
// the real HTTP server or api::Api directly) and the API fuzz targets (api_fuzz_common.cpp).
// It keeps the promises of runtime/service.h that the dialects rely on:
//   - admission on the caller's thread: a draining service kUnavailable, an unknown model
//     kNotFound, no inputs kInvalidArgument, a text or the fill-mask targets over the model's
//     max_input_bytes kInvalidInput (runtime/input_limits.h), an unknown prompt name
//     kInvalidInput (runtime/prompts.h), more than max_in_flight requests kOverloaded;
//   - `done` runs later, never inside submit() or load_model(): on a worker thread as the
//     runtime's, or, with no workers (the fuzz harness: single-threaded and deterministic), when
//     the caller runs run_pending();
//   - answers shaped as the runtime's, per-item failures as InferenceResult::error
//     (fake_outputs.h), from the models of fake_models.h and the tokenizer of fake_tokenizer.h.
// It aborts when a dialect submits what no dialect may (an output the model's task cannot give,
// fill-mask with top_k 0): that is a bug in the dialect, for the fuzzer or a test to report.
//
// Thread-safety: every member may be called from any thread, except that only_models is set
// before the service takes requests.
#pragma once

#include <atomic>
#include <condition_variable>
#include <deque>
#include <filesystem>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "api/fuzz/fake_models.h"
#include "api/fuzz/fake_outputs.h"
#include "api/fuzz/fake_tokenizer.h"
#include "runtime/service.h"

namespace onepass::api::fuzzing {

struct FakeServiceOptions {
  // Kinds from fake_models.h, each hosted under its kind's name.
  std::vector<std::string> models = {"nli", "rerank", "embed"};
  FakeLimits limits;
  // Threads that run completions and loads; 0: they wait for run_pending().
  int workers = 2;
  // How load_model reads its folder; it throws what the load answers. Unset: a folder with a
  // config.json loads (as an "nli" model), any other is kNotFound.
  std::function<void(const std::filesystem::path&)> read_folder;
  // When set, a load reads its folder and registers nothing and an unload finds nothing, so
  // every fuzz input meets the same models.
  bool fixed_models = false;
  // Inputs whose text is kNanMarker get a NaN (fake_outputs.h). The fuzz harness turns it off:
  // its marker output is shaped for a classifier, and a model's NaN is the API tests' case.
  bool nan_marker = true;
};

class FakeService : public runtime::InferenceService {
 public:
  explicit FakeService(FakeServiceOptions options = {});
  ~FakeService() override;

  // The API tests' expected answers, for the default limits.
  static constexpr int kHidden = FakeLimits::kDefaultHidden;
  static std::vector<float> logits(const runtime::InferenceItem& item, int num_labels) {
    return fake_logits(item, num_labels);
  }
  static std::vector<float> pooled(const runtime::InferenceItem& item) {
    return fake_pooled(item, kHidden);
  }
  static int num_tokens(const runtime::InferenceItem& item) { return fake_token_count(item); }

  // Test controls.
  void set_max_in_flight(std::size_t n) { max_in_flight_ = n; }
  void hold(bool on);  // while on, the workers run nothing
  std::size_t queued() const;
  std::size_t recorded_requests() const { return recorded_.load(); }
  void set_ready(bool ready) { ready_flag_ = ready; }
  std::vector<std::string> only_models;  // when non-empty, only these are hosted

  // Runs every queued load and completion on this thread, in order (with no workers).
  void run_pending();

  std::vector<runtime::ModelDescription> models() const override;
  std::optional<runtime::ModelDescription> find_model(std::string_view name) const override;
  void submit(runtime::InferenceRequest request, runtime::Completion done) override;
  tokenizer::Encoding tokenize(std::string_view model, std::string_view text,
                               std::optional<std::string_view> pair,
                               bool add_special_tokens) const override;
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
  runtime::ModelDescription require_model(std::string_view name) const;
  void enqueue(std::function<void()> job);
  void worker();

  const FakeServiceOptions options_;
  mutable std::mutex mutex_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> jobs_;  // completions and loads, in submission order
  std::vector<runtime::ModelDescription> models_;
  std::atomic<std::size_t> in_flight_{0};  // admitted requests not yet answered
  std::atomic<std::size_t> max_in_flight_{512};
  std::atomic<std::size_t> recorded_{0};
  std::atomic<bool> draining_{false};
  std::atomic<bool> ready_flag_{true};
  bool hold_ = false;
  bool stop_ = false;
  std::vector<std::thread> workers_;
};

}  // namespace onepass::api::fuzzing
