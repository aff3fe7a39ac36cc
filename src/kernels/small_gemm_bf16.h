// bf16 attention products for the reduced precisions: the same
// register blocking as small_gemm.h, but AVX512-BF16's vdpbf16ps multiplies pairs along k, so
// one instruction does 32 products into fp32 accumulators where an fp32 FMA does 16. Softmax
// and everything around the products stay fp32.
//
// B is taken packed as k pairs: word (pp, j) holds bf16(B[2 pp, j]) in its low 16 bits and
// bf16(B[2 pp + 1, j]) in its high 16 bits (zero past k), pair rows ldp words apart. A column
// window of B is then a plain offset into every pair row, which is how the DeBERTa relative
// tables, packed once at load, are read. Conversions round to nearest even.
//
// Summation over k runs in pair order for every element, so a result depends only on its own
// row of A and column of B (batch invariance). Thread-safe; runs on the calling thread alone.
#pragma once

#include <cstdint>

namespace onepass::kernels {

// Whether this build has the AVX512-BF16 kernels (compiled apart where the baseline lacks it,
// dispatch.h) and this CPU runs them; without them every function below returns false (nothing
// written) and callers keep the fp32 products.
bool has_bf16_gemm();

// Pair rows needed for a depth of k.
inline std::int64_t bf16_pair_rows(std::int64_t k) { return (k + 1) / 2; }

// out[pp, j] = pair(B[2 pp, j], B[2 pp + 1, j]) for B[k, n] row-major with stride ldb.
bool pack_bf16_pairs(const float* b, std::int64_t ldb, std::int64_t k, std::int64_t n,
                     std::uint32_t* out, std::int64_t ldp);

// The same for Bᵀ given as rows: B[p, j] = bt[j * ldbt + p] (K for Q·Kᵀ), bt [n, k].
bool pack_bf16_pairs_transposed(const float* bt, std::int64_t ldbt, std::int64_t n, std::int64_t k,
                                std::uint32_t* out, std::int64_t ldp);

// C[m, n] = alpha · bf16(A)[m, k] · B with B packed as above; A fp32 row-major (stride lda),
// rounded to bf16 here; C fp32 row-major (stride ldc), overwritten.
bool small_gemm_bf16(std::int64_t m, std::int64_t n, std::int64_t k, float alpha, const float* a,
                     std::int64_t lda, const std::uint32_t* bp, std::int64_t ldp, float* c,
                     std::int64_t ldc);

// C[m, n] = alpha · bf16(A) · bf16(op(B)) with B fp32 as small_gemm takes it (B[k, n], or
// B[n, k]ᵀ when trans_b), packed here into a per-thread buffer that grows to the largest call.
bool gemm_bf16(bool trans_b, std::int64_t m, std::int64_t n, std::int64_t k, float alpha,
               const float* a, std::int64_t lda, const float* b, std::int64_t ldb, float* c,
               std::int64_t ldc);

}  // namespace onepass::kernels
