// Compiled for the baseline only: the CPU check, the choice of each file's compilation, and the
// public kernel functions, which call through the chosen table.
#include "kernels/dispatch.h"

#include <type_traits>

#include "kernels/matmul.h"

namespace onepass::kernels {
namespace {

// The compilations CMake made besides the baseline (ONEPASS_DISPATCH_<ISA>, defined for this
// file with the lists of what each compiles: src/kernels/CMakeLists.txt).
#if defined(ONEPASS_DISPATCH_AVX512)
#define ONEPASS_AVX512_TABLE(table) (&avx512::table)
#else
#define ONEPASS_AVX512_TABLE(table) nullptr
#endif
#if defined(ONEPASS_DISPATCH_AVX512_BF16)
#define ONEPASS_AVX512_BF16_TABLE(table) (&avx512_bf16::table)
#else
#define ONEPASS_AVX512_BF16_TABLE(table) nullptr
#endif

// The table for isa among a file's compilations (null: not compiled), if this CPU runs it.
template <class Table>
const Table* runnable(Isa isa, const Table* baseline_table,
                      std::type_identity_t<const Table*> avx512_table,
                      std::type_identity_t<const Table*> avx512_bf16_table) {
  const Table* table = isa == Isa::kBaseline ? baseline_table
                       : isa == Isa::kAvx512 ? avx512_table
                                             : avx512_bf16_table;
  return table != nullptr && cpu_supports(isa) ? table : nullptr;
}

// The highest compilation this CPU runs; the baseline's is always there.
template <class Table>
const Table& best(const Table* (*table_for)(Isa)) {
  for (const Isa isa : {Isa::kAvx512Bf16, Isa::kAvx512}) {
    if (const Table* table = table_for(isa)) return *table;
  }
  return *table_for(Isa::kBaseline);
}

// Chosen on first use; the function-local statics make that thread-safe.
const ElementwiseKernels& chosen_elementwise() {
  static const ElementwiseKernels& chosen = best(&elementwise_kernels);
  return chosen;
}
const SmallGemmKernels& chosen_small_gemm() {
  static const SmallGemmKernels& chosen = best(&small_gemm_kernels);
  return chosen;
}
const Bf16GemmKernels& chosen_bf16_gemm() {
  static const Bf16GemmKernels& chosen = best(&bf16_gemm_kernels);
  return chosen;
}
const QuantizeKernels& chosen_quantize() {
  static const QuantizeKernels& chosen = best(&quantize_kernels);
  return chosen;
}

// What the baseline compilation's code uses.
#if defined(__AVX512BF16__)
constexpr const char* kBaselinePath = "avx512_bf16";
#elif defined(__AVX512F__)
constexpr const char* kBaselinePath = "avx512";
#elif defined(__AVX2__) && defined(__FMA__)
constexpr const char* kBaselinePath = "avx2";
#else
constexpr const char* kBaselinePath = "scalar";
#endif

bool cpu_has_avx2_fma() {
#if defined(__x86_64__) || defined(__i386__)
  return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
#else
  return false;
#endif
}

}  // namespace

const char* isa_name(Isa isa) {
  switch (isa) {
    case Isa::kBaseline:
      return "baseline";
    case Isa::kAvx512:
      return "avx512";
    case Isa::kAvx512Bf16:
      return "avx512_bf16";
  }
  return "?";
}

bool cpu_supports(Isa isa) {
#if defined(__x86_64__) || defined(__i386__)
  // The x86-64-v4 set that the AVX-512 compilations (and stream_gemm_avx512.cpp) may use;
  // libgcc's check also asks the OS whether it saves the AVX-512 registers. Then oneDNN's limit
  // (ONEDNN_MAX_CPU_ISA), which the Linear products follow, so that one setting holds both.
  static const bool avx512 =
      __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
      __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl") &&
      __builtin_cpu_supports("avx512cd") && onednn_isa_has_avx512();
  static const bool avx512_bf16 =
      avx512 && __builtin_cpu_supports("avx512bf16") && onednn_isa_has_avx512_bf16();
#else
  constexpr bool avx512 = false, avx512_bf16 = false;
#endif
  switch (isa) {
    case Isa::kBaseline:
      return true;
    case Isa::kAvx512:
      return avx512;
    case Isa::kAvx512Bf16:
      return avx512_bf16;
  }
  return false;
}

const ElementwiseKernels* elementwise_kernels(Isa isa) {
  return runnable(isa, &baseline::kElementwiseKernels, ONEPASS_AVX512_TABLE(kElementwiseKernels),
                  nullptr);
}

const SmallGemmKernels* small_gemm_kernels(Isa isa) {
  return runnable(isa, &baseline::kSmallGemmKernels, ONEPASS_AVX512_TABLE(kSmallGemmKernels),
                  nullptr);
}

const Bf16GemmKernels* bf16_gemm_kernels(Isa isa) {
  return runnable(isa, &baseline::kBf16GemmKernels, nullptr,
                  ONEPASS_AVX512_BF16_TABLE(kBf16GemmKernels));
}

const QuantizeKernels* quantize_kernels(Isa isa) {
  return runnable(isa, &baseline::kQuantizeKernels, ONEPASS_AVX512_TABLE(kQuantizeKernels),
                  ONEPASS_AVX512_BF16_TABLE(kQuantizeKernels));
}

CodePaths code_paths() {
  CodePaths paths;
  paths.march = ONEPASS_BUILD_MARCH;
  paths.baseline = kBaselinePath;
#if defined(ONEPASS_DISPATCH_AVX512)
  paths.variants.push_back(isa_name(Isa::kAvx512));
#endif
#if defined(ONEPASS_DISPATCH_AVX512_BF16)
  paths.variants.push_back(isa_name(Isa::kAvx512Bf16));
#endif
  paths.cpu = cpu_supports(Isa::kAvx512Bf16) ? "avx512_bf16"
              : cpu_supports(Isa::kAvx512)   ? "avx512"
              : cpu_has_avx2_fma()           ? "avx2"
                                             : "scalar";
  paths.elementwise = chosen_elementwise().path;
  paths.small_gemm = chosen_small_gemm().path;
  paths.bf16_products = chosen_bf16_gemm().path;
  paths.quantize = chosen_quantize().path;
  return paths;
}

// elementwise.h
void layer_norm(float* x, std::int64_t rows, std::int64_t cols, const float* gamma,
                const float* beta, float eps) {
  chosen_elementwise().layer_norm(x, rows, cols, gamma, beta, eps);
}
void activate(float* x, std::int64_t n, Activation act) {
  chosen_elementwise().activate(x, n, act);
}
void multiply(float* x, const float* y, std::int64_t n) { chosen_elementwise().multiply(x, y, n); }
void softmax_rows(float* x, std::int64_t rows, std::int64_t cols) {
  chosen_elementwise().softmax_rows(x, rows, cols);
}
void softmax_row(float* x, std::int64_t cols) { chosen_elementwise().softmax_row(x, cols); }
void embedding_gather(const float* table, std::int64_t dim, const std::int32_t* ids, std::int64_t n,
                      float* out, bool accumulate) {
  chosen_elementwise().embedding_gather(table, dim, ids, n, out, accumulate);
}
void gather_row(const float* src, const std::int32_t* index, std::int32_t offset,
                std::int64_t count, float* dst) {
  chosen_elementwise().gather_row(src, index, offset, count, dst);
}

// small_gemm.h
bool small_gemm(bool trans_b, std::int64_t m, std::int64_t n, std::int64_t k, float alpha,
                const float* a, std::int64_t lda, const float* b, std::int64_t ldb, float* c,
                std::int64_t ldc) {
  return chosen_small_gemm().small_gemm(trans_b, m, n, k, alpha, a, lda, b, ldb, c, ldc);
}

// small_gemm_bf16.h
bool has_bf16_gemm() { return chosen_bf16_gemm().has_bf16_gemm(); }
bool pack_bf16_pairs(const float* b, std::int64_t ldb, std::int64_t k, std::int64_t n,
                     std::uint32_t* out, std::int64_t ldp) {
  return chosen_bf16_gemm().pack_bf16_pairs(b, ldb, k, n, out, ldp);
}
bool pack_bf16_pairs_transposed(const float* bt, std::int64_t ldbt, std::int64_t n, std::int64_t k,
                                std::uint32_t* out, std::int64_t ldp) {
  return chosen_bf16_gemm().pack_bf16_pairs_transposed(bt, ldbt, n, k, out, ldp);
}
bool small_gemm_bf16(std::int64_t m, std::int64_t n, std::int64_t k, float alpha, const float* a,
                     std::int64_t lda, const std::uint32_t* bp, std::int64_t ldp, float* c,
                     std::int64_t ldc) {
  return chosen_bf16_gemm().small_gemm_bf16(m, n, k, alpha, a, lda, bp, ldp, c, ldc);
}
bool gemm_bf16(bool trans_b, std::int64_t m, std::int64_t n, std::int64_t k, float alpha,
               const float* a, std::int64_t lda, const float* b, std::int64_t ldb, float* c,
               std::int64_t ldc) {
  return chosen_bf16_gemm().gemm_bf16(trans_b, m, n, k, alpha, a, lda, b, ldb, c, ldc);
}

// quantize.h
void convert_rows_to_bf16(const float* x, std::int64_t rows, std::int64_t cols, std::int64_t ldx,
                          std::uint16_t* out) {
  chosen_quantize().convert_rows_to_bf16(x, rows, cols, ldx, out);
}
void quantize_rows_u8(const float* x, std::int64_t rows, std::int64_t cols, std::int64_t ldx,
                      std::uint8_t* q, float* scales, std::int32_t* zero_points) {
  chosen_quantize().quantize_rows_u8(x, rows, cols, ldx, q, scales, zero_points);
}
void quantize_weights_s8(const float* w, std::int64_t out, std::int64_t in, float scale_multiplier,
                         std::int8_t* q, float* scales, std::int32_t* col_sums) {
  chosen_quantize().quantize_weights_s8(w, out, in, scale_multiplier, q, scales, col_sums);
}
void dequantize_rows(const std::int32_t* acc, std::int64_t rows, std::int64_t cols,
                     const float* row_scales, const std::int32_t* zero_points,
                     const float* col_scales, const std::int32_t* col_sums, const float* bias,
                     Activation act, float* y, bool accumulate) {
  chosen_quantize().dequantize_rows(acc, rows, cols, row_scales, zero_points, col_scales, col_sums,
                                    bias, act, y, accumulate);
}

}  // namespace onepass::kernels
