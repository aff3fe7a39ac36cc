// The oneDNN fp32 matrix ceiling for the shapes onepass runs: Linear (cached runtime-rows
// primitive, the path every layer takes) against a plain dnnl_sgemm of the same product.
// Args: rows (tokens in the batch), in, out. BERT-base: 768 -> 2304 (QKV), 768 -> 3072 (FFN up),
// 3072 -> 768 (FFN down); fixtures: 64 -> 192, 64 -> 128.
#include <benchmark/benchmark.h>

#include <random>
#include <vector>

#include "kernels/matmul.h"

namespace {

using onepass::kernels::Linear;

std::vector<float> random_vector(std::size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> v(n);
  for (auto& x : v) x = dist(rng);
  return v;
}

void BM_Linear(benchmark::State& state) {
  const auto rows = state.range(0), in = state.range(1), out = state.range(2);
  const auto x = random_vector(rows * in, 1), w = random_vector(out * in, 2),
             b = random_vector(out, 3);
  std::vector<float> y(rows * out);
  const Linear linear(w.data(), b.data(), out, in);
  for (auto _ : state) {
    linear.forward(x.data(), rows, y.data());
    benchmark::DoNotOptimize(y.data());
  }
  state.counters["GFLOPS"] =
      benchmark::Counter(2.0 * rows * in * out, benchmark::Counter::kIsIterationInvariantRate,
                         benchmark::Counter::kIs1000);
}

void BM_Sgemm(benchmark::State& state) {
  const auto rows = state.range(0), in = state.range(1), out = state.range(2);
  const auto x = random_vector(rows * in, 1), w = random_vector(out * in, 2);
  std::vector<float> y(rows * out);
  for (auto _ : state) {
    onepass::kernels::gemm(false, true, rows, out, in, 1.0f, x.data(), in, w.data(), in, 0.0f,
                           y.data(), out);
    benchmark::DoNotOptimize(y.data());
  }
  state.counters["GFLOPS"] =
      benchmark::Counter(2.0 * rows * in * out, benchmark::Counter::kIsIterationInvariantRate,
                         benchmark::Counter::kIs1000);
}

void shapes(benchmark::internal::Benchmark* b) {
  for (const long rows : {16L, 59L, 512L, 2048L}) {
    b->Args({rows, 768, 2304});
    b->Args({rows, 768, 3072});
    b->Args({rows, 3072, 768});
  }
  for (const long rows : {32L, 512L}) b->Args({rows, 64, 192});
}

BENCHMARK(BM_Linear)->Apply(shapes)->UseRealTime();
BENCHMARK(BM_Sgemm)->Apply(shapes)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
