// Forward latency per batch shape for the fixture models (Google Benchmark). Args: batch size,
// tokens per sequence. Load time is outside the timed loop; the first iterations warm the
// scratch arena and oneDNN's kernels.
#include <benchmark/benchmark.h>

#include <filesystem>
#include <random>
#include <vector>

#include "model/encoder.h"

namespace {

using namespace onepass::model;

const std::filesystem::path kModels =
    std::filesystem::path(ONEPASS_TEST_DATA_DIR) / "fixtures/models";

void run_forward(benchmark::State& state, const char* model) {
  const auto encoder = load_encoder(
      kModels / model, LoadOptions{static_cast<int>(state.range(2)), Precision::kFp32});
  const auto batch_size = static_cast<std::size_t>(state.range(0));
  const auto tokens = static_cast<std::size_t>(state.range(1));
  std::mt19937 rng(7);
  std::uniform_int_distribution<int> id(5, encoder->info().vocab_size - 1);
  std::vector<std::vector<std::int32_t>> ids(batch_size, std::vector<std::int32_t>(tokens));
  std::vector<SequenceInput> batch;
  for (auto& seq : ids) {
    for (auto& t : seq) t = id(rng);
    batch.push_back(SequenceInput{seq, {}});
  }
  ForwardOutput out;
  encoder->forward(batch, out);
  for (auto _ : state) {
    encoder->forward(batch, out);
    benchmark::DoNotOptimize(out.logits.data());
  }
  state.counters["tokens_per_s"] = benchmark::Counter(
      static_cast<double>(batch_size * tokens), benchmark::Counter::kIsIterationInvariantRate);
}

void shapes(benchmark::internal::Benchmark* b) {
  for (const long threads : {1L, 2L}) {
    b->Args({1, 16, threads});
    b->Args({1, 59, threads});
    b->Args({1, 128, threads});
    b->Args({1, 512, threads});
    b->Args({8, 64, threads});
    b->Args({32, 64, threads});
    b->Args({8, 512, threads});
  }
  b->ArgNames({"batch", "tokens", "threads"})->UseRealTime()->Unit(benchmark::kMillisecond);
}

BENCHMARK_CAPTURE(run_forward, bert_tiny_nli, "bert-tiny-nli")->Apply(shapes);
BENCHMARK_CAPTURE(run_forward, xlmr_tiny_nli, "xlmr-tiny-nli")->Apply(shapes);
BENCHMARK_CAPTURE(run_forward, bert_tiny_embed, "bert-tiny-embed")->Apply(shapes);

}  // namespace

BENCHMARK_MAIN();
