// Forward latency of DeBERTa-v2 per batch shape (B sequences of L real tokens), Google
// Benchmark. Models: the deberta-v2-tiny-nli fixture always; the full-size
// mdeberta-v3-base-shaped perf model when its weights are regenerated at
// /tmp/perf/mdeberta-v3-base-shaped (or ONEPASS_MDEBERTA_DIR). Threads: ONEPASS_THREADS (2).
#include <benchmark/benchmark.h>
#include <sys/resource.h>

#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "kernels/elementwise.h"
#include "kernels/matmul.h"
#include "kernels/small_gemm_bf16.h"
#include "model/architectures/deberta_v2/deberta_v2_attention.h"
#include "model/encoder.h"
#include "model/precision_check.h"

namespace {

using onepass::model::Encoder;

int threads() {
  const char* env = std::getenv("ONEPASS_THREADS");
  return env ? std::atoi(env) : 2;
}

std::unique_ptr<Encoder> load(const std::filesystem::path& dir) {
  onepass::model::LoadOptions options;
  options.threads = threads();
  // ONEPASS_PRECISION=bf16|int8 times a reduced precision (no accuracy check: speed only).
  if (const char* precision = std::getenv("ONEPASS_PRECISION")) {
    options.precision = onepass::kernels::precision_from_name(precision);
    options.force_precision = true;
  }
  return onepass::model::load_encoder(dir, options);
}

double process_cpu_seconds() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  const auto seconds = [](const timeval& t) { return t.tv_sec + t.tv_usec * 1e-6; };
  return seconds(usage.ru_utime) + seconds(usage.ru_stime);
}

void run_shape(benchmark::State& state, const Encoder& encoder, int batch, int len) {
  // Ids cycle through the low vocabulary rows, which every model here has.
  std::vector<std::vector<std::int32_t>> ids(batch, std::vector<std::int32_t>(len));
  for (int b = 0; b < batch; ++b)
    for (int i = 0; i < len; ++i) ids[b][i] = 5 + (b * 131 + i * 17) % 3000;
  std::vector<onepass::model::SequenceInput> inputs;
  for (const auto& seq : ids) inputs.push_back({seq, {}});
  onepass::model::ForwardOutput out;
  encoder.forward(inputs, out);  // warm-up: arena sizing, primitive creation
  // Process CPU time (all threads) per forward: on a shared machine this, divided by the
  // thread count, estimates the uncontended latency (run with OMP_WAIT_POLICY=passive so that
  // idle OpenMP threads do not spin).
  const double cpu_before = process_cpu_seconds();
  for (auto _ : state) {
    encoder.forward(inputs, out);
    benchmark::DoNotOptimize(out.logits.data());
  }
  state.counters["process_cpu_ms"] = benchmark::Counter((process_cpu_seconds() - cpu_before) * 1e3 /
                                                        static_cast<double>(state.iterations()));
  state.counters["tokens/s"] = benchmark::Counter(static_cast<double>(batch) * len,
                                                  benchmark::Counter::kIsIterationInvariantRate);
}

void register_model(const std::string& name, const std::filesystem::path& dir,
                    const std::vector<std::pair<int, int>>& shapes) {
  if (!std::filesystem::exists(dir / "model.safetensors")) return;
  std::shared_ptr<Encoder> encoder = load(dir);
  for (const auto& [batch, len] : shapes) {
    benchmark::RegisterBenchmark(
        (name + "/" + std::to_string(batch) + "x" + std::to_string(len)).c_str(),
        [encoder, batch = batch, len = len](benchmark::State& s) {
          run_shape(s, *encoder, batch, len);
        })
        ->Unit(benchmark::kMillisecond)
        ->UseRealTime();
  }
}

// One head of mDeBERTa's attention (head_size 64, 256 buckets over 512 positions) for one
// sequence of `len` tokens, single-threaded: the part of the forward this architecture adds.
// Arg 1 selects the products: 0 fp32, 1 bf16 (the reduced precisions, relative tables packed).
void attention_head(benchmark::State& state) {
  namespace dv2 = onepass::model::deberta_v2;
  namespace k = onepass::kernels;
  const int len = static_cast<int>(state.range(0));
  const bool bf16 = state.range(1) != 0;
  if (bf16 && !k::has_bf16_gemm()) {
    state.SkipWithError("built without AVX512-BF16");
    return;
  }
  const int d = 64;
  const int ld = 768;
  const int rows = 512;
  const dv2::RelativeIndex index(256, 512, 512);
  std::vector<float> q(static_cast<std::size_t>(len) * ld), kk(q.size()), v(q.size()),
      out(q.size());
  std::vector<float> pos(static_cast<std::size_t>(d) * rows);  // one head's transposed table
  for (std::size_t i = 0; i < q.size(); ++i) q[i] = kk[i] = v[i] = static_cast<float>(i % 7) * 0.1f;
  for (std::size_t i = 0; i < pos.size(); ++i) pos[i] = static_cast<float>(i % 5) * 0.1f;
  std::vector<std::uint32_t> pairs(static_cast<std::size_t>(k::bf16_pair_rows(d)) * rows);
  if (bf16) k::pack_bf16_pairs(pos.data(), rows, d, rows, pairs.data(), rows);
  std::vector<float> scratch(dv2::attention_scratch_floats(len, index));
  const auto softmax = [](int m, int n, float* x, int ldx) {
    for (int r = 0; r < m; ++r) k::softmax_row(x + static_cast<std::size_t>(r) * ldx, n);
  };
  const dv2::Gemm fp32{
      [](int m, int n, int kd, const float* a, int lda, const float* b, int ldb, float* c,
         int ldc) { k::gemm(false, true, m, n, kd, 1.0f, a, lda, b, ldb, 0.0f, c, ldc); },
      [](int m, int n, int kd, const float* a, int lda, const float* b, int ldb, float* c,
         int ldc) { k::gemm(false, false, m, n, kd, 1.0f, a, lda, b, ldb, 0.0f, c, ldc); },
      softmax};
  const dv2::Gemm reduced{
      [](int m, int n, int kd, const float* a, int lda, const float* b, int ldb, float* c,
         int ldc) { k::gemm_bf16(true, m, n, kd, 1.0f, a, lda, b, ldb, c, ldc); },
      [](int m, int n, int kd, const float* a, int lda, const float* b, int ldb, float* c,
         int ldc) { k::gemm_bf16(false, m, n, kd, 1.0f, a, lda, b, ldb, c, ldc); },
      softmax,
      [](int m, int n, int kd, const float* a, int lda, const std::uint32_t* bp, int ldp, float* c,
         int ldc) { k::small_gemm_bf16(m, n, kd, 1.0f, a, lda, bp, ldp, c, ldc); }};
  dv2::HeadView h;
  h.seq_len = len;
  h.head_size = d;
  h.q = q.data();
  h.k = kk.data();
  h.v = v.data();
  h.ldq = h.ldk = h.ldv = h.ldo = ld;
  if (bf16) {
    h.pos_key_pairs = h.pos_query_pairs = pairs.data();
    h.ld_pos_key_pairs = h.ld_pos_query_pairs = rows;
  } else {
    h.pos_key_t = h.pos_query_t = pos.data();
    h.ld_pos_key_t = h.ld_pos_query_t = rows;
  }
  h.out = out.data();
  for (auto _ : state) {
    dv2::disentangled_attention_head(h, index, 13.856406f, bf16 ? reduced : fp32, scratch.data());
    benchmark::DoNotOptimize(out.data());
  }
}
BENCHMARK(attention_head)
    ->ArgsProduct({{59, 128, 512}, {0, 1}})
    ->ArgNames({"len", "bf16"})
    ->Unit(benchmark::kMicrosecond);

}  // namespace

int main(int argc, char** argv) {
  register_model(
      "deberta-v2-tiny-nli",
      std::filesystem::path(ONEPASS_TEST_DATA_DIR) / "fixtures/models/deberta-v2-tiny-nli",
      {{1, 59}, {8, 512}, {32, 128}});
  const char* env = std::getenv("ONEPASS_MDEBERTA_DIR");
  register_model("mdeberta-v3-base-shaped", env ? env : "/tmp/perf/mdeberta-v3-base-shaped",
                 {{1, 59}, {1, 512}, {8, 59}, {8, 512}, {32, 64}});
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
