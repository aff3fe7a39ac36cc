#include "kernels/small_gemm_bf16.h"

#include <algorithm>

#include "kernels/dispatch.h"
#include "kernels/thread_scratch.h"
#include "kernels/vec_math.h"

#if defined(__AVX512BF16__)
#include <immintrin.h>
// GCC 12's AVX-512 headers start some intrinsics from a deliberately undefined register
// (_mm512_undefined_*), which -Wmaybe-uninitialized reports at every inlined use.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

// Compiled once per instruction set (dispatch.h): everything here is in that compilation's
// namespace, and small_gemm_bf16.h's functions call through the table at the end. Only the
// compilations with AVX512-BF16 have the kernels.
namespace onepass::kernels::ONEPASS_ISA {

#if defined(__AVX512BF16__)
namespace {

// Rows of C computed together: kRows × 2 vectors = 12 accumulators, as in small_gemm.
constexpr int kRows = 6;

// 16 floats (masked) rounded to bf16 and widened to one per 32-bit lane, low half.
__m512i bf16_lanes(__mmask16 mask, const float* src) {
  const __m256bh h = _mm512_cvtneps_pbh(_mm512_maskz_loadu_ps(mask, src));
  return _mm512_cvtepu16_epi32(reinterpret_cast<const __m256i&>(h));
}

// Words a row of depth k takes as pairs, rounded up to whole 16-value conversions.
std::int64_t pair_words(std::int64_t k) { return (k + 15) / 16 * 8; }

// A row as bf16 in element order is already k pairs: word pp = a[2 pp] | a[2 pp + 1] << 16.
// dst holds pair_words(k) words; the tail past k is zero.
void row_to_pairs(const float* src, std::int64_t k, std::uint32_t* dst) {
  for (std::int64_t p = 0; p < k; p += 16) {
    const __m256bh h = _mm512_cvtneps_pbh(_mm512_maskz_loadu_ps(vec::lane_mask(k - p), src + p));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst + p / 2),
                        reinterpret_cast<const __m256i&>(h));
  }
}

// C[R, n] = alpha · A[R, kp pairs] · B[kp pairs, n]; A's rows are lda_words apart.
template <int R>
void row_block(std::int64_t n, std::int64_t kp, float alpha, const std::uint32_t* a,
               std::int64_t lda_words, const std::uint32_t* b, std::int64_t ldp, float* c,
               std::int64_t ldc) {
  const __m512 valpha = _mm512_set1_ps(alpha);
  for (std::int64_t j = 0; j < n; j += 32) {
    const __mmask16 m0 = vec::lane_mask(n - j), m1 = vec::lane_mask(n - j - 16);
    __m512 acc0[R], acc1[R];
    for (int r = 0; r < R; ++r) acc0[r] = acc1[r] = _mm512_setzero_ps();
    const std::uint32_t* bj = b + j;
    if (m1 != 0) {
      for (std::int64_t pp = 0; pp < kp; ++pp) {
        const __m512bh b0 = reinterpret_cast<__m512bh>(_mm512_maskz_loadu_epi32(m0, bj + pp * ldp));
        const __m512bh b1 =
            reinterpret_cast<__m512bh>(_mm512_maskz_loadu_epi32(m1, bj + pp * ldp + 16));
        for (int r = 0; r < R; ++r) {
          const __m512bh av = reinterpret_cast<__m512bh>(
              _mm512_set1_epi32(static_cast<int>(a[r * lda_words + pp])));
          acc0[r] = _mm512_dpbf16_ps(acc0[r], av, b0);
          acc1[r] = _mm512_dpbf16_ps(acc1[r], av, b1);
        }
      }
    } else {  // 16 columns or fewer left: half the work
      for (std::int64_t pp = 0; pp < kp; ++pp) {
        const __m512bh b0 = reinterpret_cast<__m512bh>(_mm512_maskz_loadu_epi32(m0, bj + pp * ldp));
        for (int r = 0; r < R; ++r) {
          const __m512bh av = reinterpret_cast<__m512bh>(
              _mm512_set1_epi32(static_cast<int>(a[r * lda_words + pp])));
          acc0[r] = _mm512_dpbf16_ps(acc0[r], av, b0);
        }
      }
    }
    for (int r = 0; r < R; ++r) {
      _mm512_mask_storeu_ps(c + r * ldc + j, m0, _mm512_mul_ps(acc0[r], valpha));
      if (m1 != 0) _mm512_mask_storeu_ps(c + r * ldc + j + 16, m1, _mm512_mul_ps(acc1[r], valpha));
    }
  }
}

template <int R>
void rows_remainder(std::int64_t rows, std::int64_t n, std::int64_t kp, float alpha,
                    const std::uint32_t* a, std::int64_t lda_words, const std::uint32_t* b,
                    std::int64_t ldp, float* c, std::int64_t ldc) {
  if constexpr (R > 0) {
    if (rows == R) return row_block<R>(n, kp, alpha, a, lda_words, b, ldp, c, ldc);
    rows_remainder<R - 1>(rows, n, kp, alpha, a, lda_words, b, ldp, c, ldc);
  }
}

}  // namespace

bool has_bf16_gemm() { return true; }

bool pack_bf16_pairs(const float* b, std::int64_t ldb, std::int64_t k, std::int64_t n,
                     std::uint32_t* out, std::int64_t ldp) {
  const std::int64_t kp = bf16_pair_rows(k);
  for (std::int64_t pp = 0; pp < kp; ++pp) {
    const float* even = b + 2 * pp * ldb;
    const float* odd = 2 * pp + 1 < k ? even + ldb : nullptr;
    for (std::int64_t j = 0; j < n; j += 16) {
      const __mmask16 m = vec::lane_mask(n - j);
      const __m512i lo = bf16_lanes(m, even + j);
      const __m512i hi =
          odd != nullptr ? _mm512_slli_epi32(bf16_lanes(m, odd + j), 16) : _mm512_setzero_si512();
      _mm512_mask_storeu_epi32(out + pp * ldp + j, m, _mm512_or_si512(lo, hi));
    }
  }
  return true;
}

bool pack_bf16_pairs_transposed(const float* bt, std::int64_t ldbt, std::int64_t n, std::int64_t k,
                                std::uint32_t* out, std::int64_t ldp) {
  const std::int64_t kp = bf16_pair_rows(k);
  std::uint32_t* row = thread_scratch_words(ScratchUse::kBf16TransposedRow, pair_words(k));
  for (std::int64_t j = 0; j < n; ++j) {
    row_to_pairs(bt + j * ldbt, k, row);
    // Word pp of row j goes to pair row pp, column j.
    for (std::int64_t pp = 0; pp < kp; ++pp) out[pp * ldp + j] = row[pp];
  }
  return true;
}

bool small_gemm_bf16(std::int64_t m, std::int64_t n, std::int64_t k, float alpha, const float* a,
                     std::int64_t lda, const std::uint32_t* bp, std::int64_t ldp, float* c,
                     std::int64_t ldc) {
  if (m <= 0 || n <= 0) return true;
  const std::int64_t kp = bf16_pair_rows(k);
  // One row block of A at a time as pairs, in a per-thread buffer that grows to the deepest k.
  const std::int64_t lda_words = pair_words(k);
  std::uint32_t* pairs = thread_scratch_words(ScratchUse::kBf16PairsOfA, kRows * lda_words);
  const std::uint32_t* words = pairs;
  for (std::int64_t i = 0; i < m; i += kRows) {
    const std::int64_t rows = std::min<std::int64_t>(kRows, m - i);
    for (std::int64_t r = 0; r < rows; ++r)
      row_to_pairs(a + (i + r) * lda, k, pairs + r * lda_words);
    if (rows == kRows)
      row_block<kRows>(n, kp, alpha, words, lda_words, bp, ldp, c + i * ldc, ldc);
    else
      rows_remainder<kRows - 1>(rows, n, kp, alpha, words, lda_words, bp, ldp, c + i * ldc, ldc);
  }
  return true;
}

bool gemm_bf16(bool trans_b, std::int64_t m, std::int64_t n, std::int64_t k, float alpha,
               const float* a, std::int64_t lda, const float* b, std::int64_t ldb, float* c,
               std::int64_t ldc) {
  std::uint32_t* packed = thread_scratch_words(ScratchUse::kBf16PackedB, bf16_pair_rows(k) * n);
  if (trans_b)
    pack_bf16_pairs_transposed(b, ldb, n, k, packed, n);
  else
    pack_bf16_pairs(b, ldb, k, n, packed, n);
  return small_gemm_bf16(m, n, k, alpha, a, lda, packed, n, c, ldc);
}

constexpr const char* kPath = "avx512_bf16";

#else  // no AVX512-BF16 in this compilation

bool has_bf16_gemm() { return false; }
bool pack_bf16_pairs(const float*, std::int64_t, std::int64_t, std::int64_t, std::uint32_t*,
                     std::int64_t) {
  return false;
}
bool pack_bf16_pairs_transposed(const float*, std::int64_t, std::int64_t, std::int64_t,
                                std::uint32_t*, std::int64_t) {
  return false;
}
bool small_gemm_bf16(std::int64_t, std::int64_t, std::int64_t, float, const float*, std::int64_t,
                     const std::uint32_t*, std::int64_t, float*, std::int64_t) {
  return false;
}
bool gemm_bf16(bool, std::int64_t, std::int64_t, std::int64_t, float, const float*, std::int64_t,
               const float*, std::int64_t, float*, std::int64_t) {
  return false;
}

constexpr const char* kPath = "none";

#endif

constinit const Bf16GemmKernels kBf16GemmKernels{
    .path = kPath,
    .has_bf16_gemm = &has_bf16_gemm,
    .pack_bf16_pairs = &pack_bf16_pairs,
    .pack_bf16_pairs_transposed = &pack_bf16_pairs_transposed,
    .small_gemm_bf16 = &small_gemm_bf16,
    .gemm_bf16 = &gemm_bf16};

}  // namespace onepass::kernels::ONEPASS_ISA
