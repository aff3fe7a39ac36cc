// oneDNN's own matmul ceiling per precision for the shapes the perf models run, to judge
// onepass's Linear against (issue 6: "matrix work at >= 75% of what oneDNN's own matmul reaches").
//
// BM_Ceiling: the best oneDNN offers for one exact shape: the row count fixed at creation (the
// brgemm implementation), weights reordered once into the layout the primitive asks for, bias
// fused, the primitive reused. Precisions: fp32; bf16 (bf16 x bf16, fp32 accumulation and output);
// int8 (u8 activations x s8 weights, s32 accumulation, per-output-channel scale, fp32 output).
// Activation conversion is outside the timed region: this is the matrix unit's ceiling.
// BM_RuntimeRows: the same product on a primitive created with a runtime row count and the
// weights in PyTorch's [out, in] layout (what a primitive shared by every batch size gets: in
// oneDNN 2.6 that is the jit gemm implementation).
// BM_LinearPrecision: onepass's kernels::Linear in each precision, conversion and quantization
// of the fp32 input included: the cost a layer really pays.
//
// BM_StreamedWeights: every fp32 matrix of a 12-layer, 768-wide encoder (Q, K, V, attention
// output, FFN up, FFN down: 340 MiB, more than any cache) one after the other, as a forward pass
// runs them, so the weights come from memory: onepass's Linear (kernels/stream_gemm.h on AVX-512)
// against oneDNN's brgemm (as BM_Ceiling). Args: implementation (0 onepass, 1 oneDNN), rows.
//
// Args: precision (0 fp32, 1 bf16, 2 int8), rows, in, out. Rows: 59 (one 59-token request), 472
// (8 x 59), 512 (one 512-token request), 2080 (32 mixed-length texts, 10..120 tokens).
#include <benchmark/benchmark.h>

#include <oneapi/dnnl/dnnl.hpp>
#include <random>
#include <string>
#include <unordered_map>
#include <vector>

#include "kernels/matmul.h"

namespace {

using dnnl::memory;
using dt = memory::data_type;
using tag = memory::format_tag;

dnnl::engine& engine() {
  static dnnl::engine e(dnnl::engine::kind::cpu, 0);
  return e;
}

template <typename T>
std::vector<T> random_values(std::size_t n, unsigned seed, float lo, float hi) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<T> v(n);
  for (auto& x : v) x = static_cast<T>(dist(rng));
  return v;
}

struct Types {
  dt src, weights;
  const char* name;
};

Types types_for(std::int64_t precision) {
  switch (precision) {
    case 1:
      return {dt::bf16, dt::bf16, "bf16"};
    case 2:
      return {dt::u8, dt::s8, "int8"};
    default:
      return {dt::f32, dt::f32, "fp32"};
  }
}

void set_flops(benchmark::State& state, std::int64_t rows, std::int64_t in, std::int64_t out,
               const char* label, const std::string& impl) {
  state.counters["GFLOPS"] =
      benchmark::Counter(2.0 * rows * in * out, benchmark::Counter::kIsIterationInvariantRate,
                         benchmark::Counter::kIs1000);
  state.SetLabel(std::string(label) + " " + impl);
}

// One matmul primitive plus its operands, the weights already in the primitive's layout.
void run_primitive(benchmark::State& state, bool runtime_rows) {
  const auto precision = state.range(0), rows = state.range(1), in = state.range(2),
             out = state.range(3);
  const Types t = types_for(precision);
  auto& eng = engine();
  dnnl::stream stream(eng);

  const memory::dim m = runtime_rows ? DNNL_RUNTIME_DIM_VAL : rows;
  const memory::desc src_md({m, in}, t.src, tag::ab);
  const memory::desc plain_weights_md({in, out}, t.weights, tag::ba);  // PyTorch [out, in]
  const memory::desc weights_md =
      runtime_rows ? plain_weights_md : memory::desc({in, out}, t.weights, tag::any);
  const memory::desc bias_md({1, out}, dt::f32, tag::ab);
  const memory::desc dst_md({m, out}, dt::f32, tag::ab);
  dnnl::primitive_attr attr;
  if (precision == 2)
    attr.set_output_scales(1 << 1, std::vector<float>(static_cast<std::size_t>(out), 0.01f));
  const dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(src_md, weights_md, bias_md, dst_md),
                                        attr, eng);
  const dnnl::matmul prim(pd);

  // Operands as raw bytes of the right size; values only need to be finite and in range.
  const auto src_f32 = random_values<float>(static_cast<std::size_t>(rows * in), 1, 0.0f, 1.0f);
  const auto w_f32 = random_values<float>(static_cast<std::size_t>(in * out), 2, -1.0f, 1.0f);
  const auto bias = random_values<float>(static_cast<std::size_t>(out), 3, -1.0f, 1.0f);
  const memory::desc run_src_md({rows, in}, t.src, tag::ab);
  memory src(run_src_md, eng), plain_w(plain_weights_md, eng), w(pd.weights_desc(), eng);
  memory f32_src({{rows, in}, dt::f32, tag::ab}, eng, const_cast<float*>(src_f32.data()));
  memory f32_w({{in, out}, dt::f32, tag::ba}, eng, const_cast<float*>(w_f32.data()));
  dnnl::reorder(f32_src, src).execute(stream, f32_src, src);
  dnnl::reorder(f32_w, plain_w).execute(stream, f32_w, plain_w);
  dnnl::reorder(plain_w, w).execute(stream, plain_w, w);
  memory b(bias_md, eng, const_cast<float*>(bias.data()));
  memory dst({{rows, out}, dt::f32, tag::ab}, eng);
  stream.wait();

  const std::unordered_map<int, memory> args{
      {DNNL_ARG_SRC, src}, {DNNL_ARG_WEIGHTS, w}, {DNNL_ARG_BIAS, b}, {DNNL_ARG_DST, dst}};
  for (auto _ : state) {
    prim.execute(stream, args);
    stream.wait();
  }
  set_flops(state, rows, in, out, t.name, pd.impl_info_str());
}

void BM_Ceiling(benchmark::State& state) { run_primitive(state, false); }
void BM_RuntimeRows(benchmark::State& state) { run_primitive(state, true); }

void BM_LinearPrecision(benchmark::State& state) {
  using onepass::kernels::Precision;
  const auto precision = state.range(0), rows = state.range(1), in = state.range(2),
             out = state.range(3);
  const Precision p = precision == 1   ? Precision::kBf16
                      : precision == 2 ? Precision::kInt8
                                       : Precision::kFp32;
  const auto x = random_values<float>(static_cast<std::size_t>(rows * in), 1, -1.0f, 1.0f);
  const auto w = random_values<float>(static_cast<std::size_t>(in * out), 2, -0.05f, 0.05f);
  const auto bias = random_values<float>(static_cast<std::size_t>(out), 3, -0.02f, 0.02f);
  std::vector<float> y(static_cast<std::size_t>(rows * out));
  const onepass::kernels::Linear linear(w.data(), bias.data(), out, in,
                                        onepass::kernels::Activation::kIdentity, 0, p);
  linear.forward(x.data(), rows, y.data());  // first call sizes the per-thread buffers
  for (auto _ : state) {
    linear.forward(x.data(), rows, y.data());
    benchmark::DoNotOptimize(y.data());
  }
  set_flops(state, rows, in, out, types_for(precision).name, "onepass Linear");
}

void BM_StreamedWeights(benchmark::State& state) {
  const bool onednn = state.range(0) == 1;
  const auto rows = state.range(1);
  constexpr int kLayers = 12;
  constexpr std::int64_t kShapes[][2] = {{768, 768}, {768, 768},  {768, 768},
                                         {768, 768}, {768, 3072}, {3072, 768}};  // in, out
  auto& eng = engine();
  dnnl::stream stream(eng);
  std::vector<onepass::kernels::Linear> linears;
  std::vector<dnnl::matmul> prims;
  std::vector<std::unordered_map<int, memory>> args;
  const auto x = random_values<float>(static_cast<std::size_t>(rows * 3072), 1, -1.0f, 1.0f);
  std::vector<float> y(static_cast<std::size_t>(rows * 3072));
  double flops = 0.0;
  unsigned seed = 2;
  for (int layer = 0; layer < kLayers; ++layer) {
    for (const auto& [in, out] : kShapes) {
      flops += 2.0 * static_cast<double>(rows * in * out);
      const auto w =
          random_values<float>(static_cast<std::size_t>(in * out), seed++, -0.05f, 0.05f);
      if (!onednn) {
        linears.emplace_back(w.data(), nullptr, out, in);
        continue;
      }
      const dnnl::matmul::primitive_desc pd(
          dnnl::matmul::desc(memory::desc({rows, in}, dt::f32, tag::ab),
                             memory::desc({in, out}, dt::f32, tag::any),
                             memory::desc({rows, out}, dt::f32, tag::ab)),
          eng);
      memory plain({{in, out}, dt::f32, tag::ba}, eng, const_cast<float*>(w.data()));
      memory packed(pd.weights_desc(), eng);
      dnnl::reorder(plain, packed).execute(stream, plain, packed);
      stream.wait();
      prims.emplace_back(pd);
      args.push_back({{DNNL_ARG_SRC,
                       memory({{rows, in}, dt::f32, tag::ab}, eng, const_cast<float*>(x.data()))},
                      {DNNL_ARG_WEIGHTS, packed},
                      {DNNL_ARG_DST, memory({{rows, out}, dt::f32, tag::ab}, eng, y.data())}});
    }
  }
  for (auto _ : state) {
    if (onednn) {
      for (std::size_t i = 0; i < prims.size(); ++i) prims[i].execute(stream, args[i]);
      stream.wait();
    } else {
      for (const auto& linear : linears) linear.forward(x.data(), rows, y.data());
    }
    benchmark::DoNotOptimize(y.data());
  }
  state.counters["GFLOPS"] = benchmark::Counter(
      flops, benchmark::Counter::kIsIterationInvariantRate, benchmark::Counter::kIs1000);
  state.SetLabel(onednn ? "oneDNN brgemm" : "onepass Linear");
}

void shapes(benchmark::internal::Benchmark* b) {
  for (const long precision : {0L, 1L, 2L}) {
    for (const long rows : {59L, 472L, 512L, 2080L}) {
      // 768-wide models (BERT-base, XLM-R-base, mDeBERTa-base): fused QKV, attention output /
      // DeBERTa projections, FFN up, FFN down.
      b->Args({precision, rows, 768, 2304});
      b->Args({precision, rows, 768, 768});
      b->Args({precision, rows, 768, 3072});
      b->Args({precision, rows, 3072, 768});
      // MiniLM-L12-H384.
      b->Args({precision, rows, 384, 1152});
      b->Args({precision, rows, 384, 384});
      b->Args({precision, rows, 384, 1536});
      b->Args({precision, rows, 1536, 384});
    }
  }
}

BENCHMARK(BM_Ceiling)->Apply(shapes)->UseRealTime();
BENCHMARK(BM_RuntimeRows)->Apply(shapes)->UseRealTime();
BENCHMARK(BM_LinearPrecision)->Apply(shapes)->UseRealTime();
BENCHMARK(BM_StreamedWeights)
    ->ArgsProduct({{0, 1}, {31, 128, 512, 2048}})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

}  // namespace
