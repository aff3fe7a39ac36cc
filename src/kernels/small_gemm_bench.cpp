// Attention's per-(sequence, head) products: kernels/small_gemm.h against oneDNN's dnnl_sgemm
// (what kernels::gemm called before). Args: m, n, k, trans_b. Shapes: head_dim 64; QKᵀ at L
// tokens (L x L x 64, Bᵀ), DeBERTa's position terms (L x 2L-1 x 64, Bᵀ), P·V (L x 64 x L).
#include <benchmark/benchmark.h>
#include <dnnl.h>

#include <random>
#include <vector>

#include "kernels/small_gemm.h"

namespace {

std::vector<float> random_matrix(std::size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> v(n);
  for (auto& x : v) x = dist(rng);
  return v;
}

template <bool kOnednn>
void BM_AttentionGemm(benchmark::State& state) {
  const auto m = state.range(0), n = state.range(1), k = state.range(2);
  const bool trans_b = state.range(3) != 0;
  const auto a = random_matrix(m * k, 1), b = random_matrix(n * k, 2);
  std::vector<float> c(m * n);
  const auto ldb = trans_b ? k : n;
  for (auto _ : state) {
    if constexpr (kOnednn) {
      dnnl_sgemm('N', trans_b ? 'T' : 'N', m, n, k, 1.0f, a.data(), k, b.data(), ldb, 0.0f,
                 c.data(), n);
    } else {
      onepass::kernels::small_gemm(trans_b, m, n, k, 1.0f, a.data(), k, b.data(), ldb, c.data(), n);
    }
    benchmark::DoNotOptimize(c.data());
  }
  state.counters["GFLOPS"] = benchmark::Counter(2.0 * static_cast<double>(m * n * k),
                                                benchmark::Counter::kIsIterationInvariantRate,
                                                benchmark::Counter::kIs1000);
}

void shapes(benchmark::internal::Benchmark* b) {
  for (const long l : {16, 65, 128, 512}) {
    b->Args({l, l, 64, 1});
    b->Args({l, 2 * l - 1, 64, 1});
    b->Args({l, 64, l, 0});
  }
}

BENCHMARK(BM_AttentionGemm<false>)->Apply(shapes)->Name("small_gemm");
BENCHMARK(BM_AttentionGemm<true>)->Apply(shapes)->Name("dnnl_sgemm");

}  // namespace
