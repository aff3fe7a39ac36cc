// Register-blocked AVX-512 (on CPUs without it, AVX2 + FMA) products for attention's
// per-(sequence, head) matrices: Q·Kᵀ, the DeBERTa position terms and P·V, with k = head_dim (64)
// and m, n = a sequence's length. oneDNN's dnnl_sgemm packs both operands on every call, which at
// these sizes cost it a third of an int8 mDeBERTa forward; here only a transposed B is packed, once
// per call, into a per-thread buffer that grows to the largest call and then stays (no steady-state
// allocation).
//
// Summation over k runs in index order for every element, so a result depends only on its own
// row of A and column of B (batch invariance). Thread-safe; runs on the calling thread alone.
// Compiled once per instruction set and chosen at run time (dispatch.h).
#pragma once

#include <cstdint>

namespace onepass::kernels {

// C[m, n] = alpha · A[m, k] · op(B) with op(B) = B[k, n] (trans_b false) or B[n, k]ᵀ (true);
// row-major with row strides lda, ldb, ldc. Always returns true: builds with neither AVX-512 nor
// AVX2 + FMA run a plain loop in the same summation order (still batch invariant).
bool small_gemm(bool trans_b, std::int64_t m, std::int64_t n, std::int64_t k, float alpha,
                const float* a, std::int64_t lda, const float* b, std::int64_t ldb, float* c,
                std::int64_t ldc);

}  // namespace onepass::kernels
