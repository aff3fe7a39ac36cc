// Helpers to submit requests to a Runtime from tests and wait for their answers.
#pragma once

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <future>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "base/error.h"
#include "fakes.h"
#include "prometheus_check.h"
#include "runtime/runtime.h"

namespace onepass::runtime::testing {

// A submitted request; counts how often its completion ran (it must be exactly once).
struct Pending {
  std::shared_ptr<std::atomic<int>> calls = std::make_shared<std::atomic<int>>(0);
  std::shared_ptr<std::promise<InferenceResult>> promise =
      std::make_shared<std::promise<InferenceResult>>();
  std::shared_future<InferenceResult> future = promise->get_future().share();

  bool done(int timeout_ms = 10000) const {
    return future.wait_for(std::chrono::milliseconds(timeout_ms)) == std::future_status::ready;
  }
  // A copy: the shared state may outlive no one once this Pending is gone. A minute: a batch of
  // every golden case on one thread of a loaded machine (or under ASan) can take more than 10 s,
  // and a request that never completes still fails, only later.
  InferenceResult get() const {
    EXPECT_TRUE(done(60000)) << "request never completed";
    return future.get();
  }
};

inline Pending submit(InferenceService& service, InferenceRequest request) {
  Pending p;
  auto calls = p.calls;
  auto promise = p.promise;
  service.submit(std::move(request), [calls, promise](InferenceResult result) {
    if (calls->fetch_add(1) == 0) promise->set_value(std::move(result));
  });
  return p;
}

// The kind of the error a call threw, or nullopt when it did not throw.
template <class F>
std::optional<ErrorKind> thrown_kind(F&& f, std::string* message = nullptr) {
  try {
    f();
  } catch (const Error& e) {
    if (message) *message = e.what();
    return e.kind();
  }
  return std::nullopt;
}

inline std::optional<ErrorKind> result_error(const InferenceResult& r,
                                             std::string* message = nullptr) {
  if (!r.error) return std::nullopt;
  try {
    std::rethrow_exception(r.error);
  } catch (const Error& e) {
    if (message) *message = e.what();
    return e.kind();
  } catch (...) {
    return ErrorKind::kInternal;
  }
}

inline InferenceRequest texts(const std::string& model, const std::vector<std::string>& inputs) {
  InferenceRequest r;
  r.model = model;
  for (const auto& text : inputs)
    r.items.push_back(InferenceItem{text, std::nullopt, false, {}, {}});
  return r;
}

inline InferenceRequest ids(const std::string& model,
                            const std::vector<std::vector<std::int32_t>>& inputs) {
  InferenceRequest r;
  r.model = model;
  for (const auto& list : inputs)
    r.items.push_back(InferenceItem{"", std::nullopt, true, list, {}});
  return r;
}

// [CLS] ids [SEP] of the fake tokenizer for `text`.
inline std::vector<std::int32_t> encoded(const std::string& text) {
  std::vector<std::int32_t> out{kCls};
  for (auto id : fake_tokenize(text)) out.push_back(id);
  out.push_back(kSep);
  return out;
}

// Polls `pred` every millisecond for up to `timeout_ms`.
template <class P>
bool eventually(P pred, int timeout_ms = 5000) {
  const auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  while (std::chrono::steady_clock::now() < end) {
    if (pred()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return pred();
}

inline double metric(const Runtime& rt, const std::string& name,
                     const std::map<std::string, std::string>& labels = {}) {
  std::vector<Sample> samples;
  auto problems = check_prometheus_text(rt.render_metrics(), &samples);
  EXPECT_TRUE(problems.empty());
  return sample_value(samples, name, labels);
}

inline RuntimeOptions fake_options(FakeWorld& world) {
  RuntimeOptions o;
  o.models = {{"nli", fixture_model("bert-tiny-nli")},
              {"embed", fixture_model("bert-tiny-embed")},
              {"rerank", fixture_model("bert-tiny-rerank")}};
  o.loaders = world.loaders();
  return o;
}

}  // namespace onepass::runtime::testing
