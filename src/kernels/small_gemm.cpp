#include "kernels/small_gemm.h"

#include <algorithm>

#include "kernels/dispatch.h"
#include "kernels/thread_scratch.h"
#include "kernels/vec_math.h"

#if defined(__AVX__)
#include <immintrin.h>
#endif
#if defined(__AVX512F__)
// GCC 12's AVX-512 headers start some intrinsics from a deliberately undefined register
// (_mm512_undefined_*), which -Wmaybe-uninitialized reports at every inlined use.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

// Compiled once per instruction set (dispatch.h): everything here is in that compilation's
// namespace, and small_gemm.h's function calls through the table at the end.
namespace onepass::kernels::ONEPASS_ISA {

#if defined(__AVX512F__)
namespace {

// Rows of C computed together: kRows × 2 vectors = 12 accumulators, plus the two B vectors and a
// broadcast, well inside the 32 zmm registers.
constexpr int kRows = 6;

// C[R, n] = alpha · A[R, k] · B[k, n] (B row-major, stride ldb), 32 columns at a time.
template <int R>
void row_block(std::int64_t n, std::int64_t k, float alpha, const float* a, std::int64_t lda,
               const float* b, std::int64_t ldb, float* c, std::int64_t ldc) {
  const __m512 valpha = _mm512_set1_ps(alpha);
  for (std::int64_t j = 0; j < n; j += 32) {
    const __mmask16 m0 = vec::lane_mask(n - j), m1 = vec::lane_mask(n - j - 16);
    __m512 acc0[R], acc1[R];
    for (int r = 0; r < R; ++r) acc0[r] = acc1[r] = _mm512_setzero_ps();
    const float* bj = b + j;
    if (m1 != 0) {
      for (std::int64_t p = 0; p < k; ++p) {
        const __m512 b0 = _mm512_maskz_loadu_ps(m0, bj + p * ldb);
        const __m512 b1 = _mm512_maskz_loadu_ps(m1, bj + p * ldb + 16);
        for (int r = 0; r < R; ++r) {
          const __m512 av = _mm512_set1_ps(a[r * lda + p]);
          acc0[r] = _mm512_fmadd_ps(av, b0, acc0[r]);
          acc1[r] = _mm512_fmadd_ps(av, b1, acc1[r]);
        }
      }
    } else {  // 16 columns or fewer left: half the work
      for (std::int64_t p = 0; p < k; ++p) {
        const __m512 b0 = _mm512_maskz_loadu_ps(m0, bj + p * ldb);
        for (int r = 0; r < R; ++r)
          acc0[r] = _mm512_fmadd_ps(_mm512_set1_ps(a[r * lda + p]), b0, acc0[r]);
      }
    }
    for (int r = 0; r < R; ++r) {
      _mm512_mask_storeu_ps(c + r * ldc + j, m0, _mm512_mul_ps(acc0[r], valpha));
      if (m1 != 0) _mm512_mask_storeu_ps(c + r * ldc + j + 16, m1, _mm512_mul_ps(acc1[r], valpha));
    }
  }
}

template <int R>
void rows_remainder(std::int64_t rows, std::int64_t n, std::int64_t k, float alpha, const float* a,
                    std::int64_t lda, const float* b, std::int64_t ldb, float* c,
                    std::int64_t ldc) {
  if constexpr (R > 0) {
    if (rows == R) return row_block<R>(n, k, alpha, a, lda, b, ldb, c, ldc);
    rows_remainder<R - 1>(rows, n, k, alpha, a, lda, b, ldb, c, ldc);
  }
}

}  // namespace
#endif  // __AVX512F__

#if !defined(__AVX512F__) && defined(__AVX2__) && defined(__FMA__)
namespace {

// The AVX2 twin of the kernel above: 6 rows x 16 columns = 12 ymm accumulators, two B vectors
// and a broadcast in the 16 registers. Column tails use maskload / maskstore.
constexpr int kRows = 6;

// The first min(max(count, 0), 8) lanes set.
inline __m256i lane_mask8(std::int64_t count) {
  alignas(32) static const std::int32_t kOnes[16] = {-1, -1, -1, -1, -1, -1, -1, -1,
                                                     0,  0,  0,  0,  0,  0,  0,  0};
  const std::int64_t skip = 8 - std::clamp<std::int64_t>(count, 0, 8);
  return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(kOnes + skip));
}

template <int R>
void row_block(std::int64_t n, std::int64_t k, float alpha, const float* a, std::int64_t lda,
               const float* b, std::int64_t ldb, float* c, std::int64_t ldc) {
  const __m256 valpha = _mm256_set1_ps(alpha);
  for (std::int64_t j = 0; j < n; j += 16) {
    const bool full = j + 16 <= n;
    const __m256i m0 = lane_mask8(n - j), m1 = lane_mask8(n - j - 8);
    const bool two = j + 8 < n;
    __m256 acc0[R], acc1[R];
    for (int r = 0; r < R; ++r) acc0[r] = acc1[r] = _mm256_setzero_ps();
    const float* bj = b + j;
    if (full) {
      for (std::int64_t p = 0; p < k; ++p) {
        const __m256 b0 = _mm256_loadu_ps(bj + p * ldb);
        const __m256 b1 = _mm256_loadu_ps(bj + p * ldb + 8);
        for (int r = 0; r < R; ++r) {
          const __m256 av = _mm256_broadcast_ss(a + r * lda + p);
          acc0[r] = _mm256_fmadd_ps(av, b0, acc0[r]);
          acc1[r] = _mm256_fmadd_ps(av, b1, acc1[r]);
        }
      }
    } else if (two) {
      for (std::int64_t p = 0; p < k; ++p) {
        const __m256 b0 = _mm256_loadu_ps(bj + p * ldb);
        const __m256 b1 = _mm256_maskload_ps(bj + p * ldb + 8, m1);
        for (int r = 0; r < R; ++r) {
          const __m256 av = _mm256_broadcast_ss(a + r * lda + p);
          acc0[r] = _mm256_fmadd_ps(av, b0, acc0[r]);
          acc1[r] = _mm256_fmadd_ps(av, b1, acc1[r]);
        }
      }
    } else {  // 8 columns or fewer left: half the work
      for (std::int64_t p = 0; p < k; ++p) {
        const __m256 b0 = _mm256_maskload_ps(bj + p * ldb, m0);
        for (int r = 0; r < R; ++r)
          acc0[r] = _mm256_fmadd_ps(_mm256_broadcast_ss(a + r * lda + p), b0, acc0[r]);
      }
    }
    for (int r = 0; r < R; ++r) {
      float* cr = c + r * ldc + j;
      if (full) {
        _mm256_storeu_ps(cr, _mm256_mul_ps(acc0[r], valpha));
        _mm256_storeu_ps(cr + 8, _mm256_mul_ps(acc1[r], valpha));
      } else {
        _mm256_maskstore_ps(cr, m0, _mm256_mul_ps(acc0[r], valpha));
        if (two) _mm256_maskstore_ps(cr + 8, m1, _mm256_mul_ps(acc1[r], valpha));
      }
    }
  }
}

template <int R>
void rows_remainder(std::int64_t rows, std::int64_t n, std::int64_t k, float alpha, const float* a,
                    std::int64_t lda, const float* b, std::int64_t ldb, float* c,
                    std::int64_t ldc) {
  if constexpr (R > 0) {
    if (rows == R) return row_block<R>(n, k, alpha, a, lda, b, ldb, c, ldc);
    rows_remainder<R - 1>(rows, n, k, alpha, a, lda, b, ldb, c, ldc);
  }
}

}  // namespace
#endif  // AVX2 + FMA without AVX-512

namespace {
#if defined(__AVX__)
// One 8 x 8 tile: dst[p, j] = src[j, p] through the unpack / shuffle / lane-swap network.
void transpose_8x8(const float* src, std::int64_t ld, float* dst, std::int64_t ldd) {
  __m256 r[8], t[8];
  for (int i = 0; i < 8; ++i) r[i] = _mm256_loadu_ps(src + i * ld);
  for (int i = 0; i < 8; i += 2) {
    t[i] = _mm256_unpacklo_ps(r[i], r[i + 1]);
    t[i + 1] = _mm256_unpackhi_ps(r[i], r[i + 1]);
  }
  for (int i = 0; i < 8; i += 4) {
    r[i] = _mm256_shuffle_ps(t[i], t[i + 2], _MM_SHUFFLE(1, 0, 1, 0));
    r[i + 1] = _mm256_shuffle_ps(t[i], t[i + 2], _MM_SHUFFLE(3, 2, 3, 2));
    r[i + 2] = _mm256_shuffle_ps(t[i + 1], t[i + 3], _MM_SHUFFLE(1, 0, 1, 0));
    r[i + 3] = _mm256_shuffle_ps(t[i + 1], t[i + 3], _MM_SHUFFLE(3, 2, 3, 2));
  }
  for (int i = 0; i < 4; ++i) {
    _mm256_storeu_ps(dst + i * ldd, _mm256_permute2f128_ps(r[i], r[i + 4], 0x20));
    _mm256_storeu_ps(dst + (i + 4) * ldd, _mm256_permute2f128_ps(r[i], r[i + 4], 0x31));
  }
}

#endif

// dst[p, j] = src[j, p] for j < n, p < k: Bᵀ made row-major (stride n), 8 x 8 tiles in
// registers (AVX builds), the ragged edges element by element.
void transpose(const float* src, std::int64_t ld, std::int64_t n, std::int64_t k, float* dst) {
#if defined(__AVX__)
  const std::int64_t n8 = n - n % 8, k8 = k - k % 8;
  for (std::int64_t j = 0; j < n8; j += 8)
    for (std::int64_t p = 0; p < k8; p += 8)
      transpose_8x8(src + j * ld + p, ld, dst + p * n + j, n);
#else
  const std::int64_t n8 = 0, k8 = 0;
#endif
  for (std::int64_t j = 0; j < n; ++j) {
    const std::int64_t p_begin = j < n8 ? k8 : 0;  // full tiles covered [0, k8) of these rows
    for (std::int64_t p = p_begin; p < k; ++p) dst[p * n + j] = src[j * ld + p];
  }
}

}  // namespace

bool small_gemm(bool trans_b, std::int64_t m, std::int64_t n, std::int64_t k, float alpha,
                const float* a, std::int64_t lda, const float* b, std::int64_t ldb, float* c,
                std::int64_t ldc) {
  if (m <= 0 || n <= 0) return true;
  if (trans_b) {
    float* packed = thread_scratch_floats(ScratchUse::kSmallGemmTransposedB, n * k);
    transpose(b, ldb, n, k, packed);
    b = packed;
    ldb = n;
  }
#if defined(__AVX512F__) || (defined(__AVX2__) && defined(__FMA__))
  std::int64_t i = 0;
  for (; i + kRows <= m; i += kRows)
    row_block<kRows>(n, k, alpha, a + i * lda, lda, b, ldb, c + i * ldc, ldc);
  rows_remainder<kRows - 1>(m - i, n, k, alpha, a + i * lda, lda, b, ldb, c + i * ldc, ldc);
#else
  // Portable builds: one row at a time, each element summed over k in index order.
  for (std::int64_t i = 0; i < m; ++i) {
    float* ci = c + i * ldc;
    std::fill(ci, ci + n, 0.0f);
    for (std::int64_t p = 0; p < k; ++p) {
      const float av = a[i * lda + p];
      const float* bp = b + p * ldb;
      for (std::int64_t j = 0; j < n; ++j) ci[j] += av * bp[j];
    }
    for (std::int64_t j = 0; j < n; ++j) ci[j] *= alpha;
  }
#endif
  return true;
}

namespace {
// The instructions this compilation's kernel uses.
#if defined(__AVX512F__)
constexpr const char* kPath = "avx512";
#elif defined(__AVX2__) && defined(__FMA__)
constexpr const char* kPath = "avx2";
#else
constexpr const char* kPath = "scalar";
#endif
}  // namespace

constinit const SmallGemmKernels kSmallGemmKernels{.path = kPath, .small_gemm = &small_gemm};

}  // namespace onepass::kernels::ONEPASS_ISA
