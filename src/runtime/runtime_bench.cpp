// Google Benchmark: what the runtime itself costs per request, with an encoder that computes
// nothing (so the numbers are admission, hand-offs between threads, batching and completion),
// and the real bert-tiny-nli encoder through the runtime against a direct forward pass.
#include <benchmark/benchmark.h>

#include <atomic>
#include <condition_variable>
#include <mutex>

#include "model/encoder.h"
#include "runtime/batcher.h"
#include "runtime/runtime.h"

namespace onepass::runtime {
namespace {

const std::filesystem::path kNli =
    std::filesystem::path(ONEPASS_TEST_DATA_DIR) / "fixtures" / "models" / "bert-tiny-nli";

class NullEncoder final : public model::Encoder {
 public:
  explicit NullEncoder(model::ModelInfo info) : info_(std::move(info)) {}
  const model::ModelInfo& info() const override { return info_; }
  void forward(std::span<const model::SequenceInput> batch,
               model::ForwardOutput& out) const override {
    out.logits.assign(batch.size() * info_.num_labels, 0.5f);
  }

 private:
  model::ModelInfo info_;
};

// Waits for `n` completions.
class Countdown {
 public:
  void add(int n) {
    std::lock_guard lock(mutex_);
    left_ += n;
  }
  void done() {
    std::lock_guard lock(mutex_);
    if (--left_ == 0) cv_.notify_all();
  }
  void wait() {
    std::unique_lock lock(mutex_);
    cv_.wait(lock, [&] { return left_ == 0; });
  }

 private:
  std::mutex mutex_;
  std::condition_variable cv_;
  int left_ = 0;
};

InferenceRequest request_of(int items) {
  InferenceRequest r;
  r.model = "nli";
  for (int i = 0; i < items; ++i) {
    InferenceItem item;
    item.pretokenized = true;
    item.input_ids = std::vector<std::int32_t>(24, 100);
    item.input_ids.front() = 12;
    item.input_ids.back() = 13;
    r.items.push_back(std::move(item));
  }
  return r;
}

RuntimeOptions options(bool null_engine) {
  RuntimeOptions o;
  o.models = {{"nli", kNli}};
  o.threads = 1;
  if (null_engine) {
    o.loaders.encoder = [](const std::filesystem::path& dir, const model::LoadOptions& load) {
      auto real = model::load_encoder(dir, load);
      return std::make_unique<NullEncoder>(real->info());
    };
  }
  return o;
}

// Requests in flight at once = state.range(0); one input each.
void BM_RuntimeOverhead(benchmark::State& state, bool null_engine) {
  Runtime rt(options(null_engine));
  rt.wait_ready(std::chrono::seconds(60));
  const int in_flight = static_cast<int>(state.range(0));
  const InferenceRequest request = request_of(1);
  for (auto _ : state) {
    Countdown countdown;
    countdown.add(in_flight);
    for (int i = 0; i < in_flight; ++i) {
      rt.submit(request, [&](InferenceResult r) {
        benchmark::DoNotOptimize(r.items.data());
        countdown.done();
      });
    }
    countdown.wait();
  }
  state.SetItemsProcessed(state.iterations() * in_flight);
}
BENCHMARK_CAPTURE(BM_RuntimeOverhead, null_engine, true)->Arg(1)->Arg(64)->UseRealTime();
BENCHMARK_CAPTURE(BM_RuntimeOverhead, bert_tiny, false)->Arg(1)->Arg(64)->UseRealTime();

void BM_DirectForward(benchmark::State& state) {
  auto encoder = model::load_encoder(kNli, {1, model::Precision::kFp32});
  const InferenceRequest request = request_of(static_cast<int>(state.range(0)));
  std::vector<model::SequenceInput> inputs;
  for (const auto& item : request.items) inputs.push_back({item.input_ids, {}});
  model::ForwardOutput out;
  for (auto _ : state) encoder->forward(inputs, out);
  state.SetItemsProcessed(state.iterations() * state.range(0));
}
BENCHMARK(BM_DirectForward)->Arg(1)->Arg(64)->UseRealTime();

void BM_BatcherPushNext(benchmark::State& state) {
  Batcher<int> batcher(BatchLimits{});  // the serving defaults, no wait
  const auto now = std::chrono::steady_clock::now();
  for (auto _ : state) {
    for (int i = 0; i < 64; ++i) batcher.push(static_cast<std::uint64_t>(i % 4 + 1), i, 24, now);
    while (auto b = batcher.next(now)) benchmark::DoNotOptimize(b->items.data());
  }
  state.SetItemsProcessed(state.iterations() * 64);
}
BENCHMARK(BM_BatcherPushNext);

}  // namespace
}  // namespace onepass::runtime

BENCHMARK_MAIN();
