#include "kernels/elementwise.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "kernels/dispatch.h"
#include "kernels/vec_math.h"

#if defined(__AVX512F__)
// GCC 12's AVX-512 headers start some intrinsics from a deliberately undefined register
// (_mm512_undefined_*), which -Wmaybe-uninitialized reports at every inlined use.
#if !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#endif

// Compiled once per instruction set (dispatch.h): everything here is in that compilation's
// namespace, and elementwise.h's functions call through the table at the end.
namespace onepass::kernels::ONEPASS_ISA {
namespace {

// The instructions the code paths below use in this compilation.
#if defined(__AVX512F__)
constexpr const char* kPath = "avx512";
#elif defined(__AVX2__) && defined(__FMA__)
constexpr const char* kPath = "avx2";  // softmax and activations; layer_norm stays scalar
#else
constexpr const char* kPath = "scalar";
#endif

// Small per-element work: only fan out to threads when there is enough of it.
constexpr std::int64_t kParallelMinElements = 1 << 14;
// activate() hands threads blocks of this many elements.
constexpr std::int64_t kActivateBlock = 4096;

// Each row's sums run in a fixed order that depends only on the row length, so a row's result
// never depends on its neighbours (batch invariance).
void layer_norm_row(float* row, std::int64_t cols, const float* gamma, const float* beta,
                    float eps) {
  const float n = static_cast<float>(cols);
  std::int64_t c = 0;
#if defined(__AVX512F__)
  __m512 vsum = _mm512_setzero_ps();
  for (; c + 16 <= cols; c += 16) vsum = _mm512_add_ps(vsum, _mm512_loadu_ps(row + c));
  if (c < cols)
    vsum = _mm512_add_ps(vsum, _mm512_maskz_loadu_ps(vec::tail_mask(cols - c), row + c));
  const float mean = vec::reduce_add(vsum) / n;
  const __m512 vmean = _mm512_set1_ps(mean);
  __m512 vsq = _mm512_setzero_ps();
  for (c = 0; c + 16 <= cols; c += 16) {
    const __m512 d = _mm512_sub_ps(_mm512_loadu_ps(row + c), vmean);
    vsq = _mm512_fmadd_ps(d, d, vsq);
  }
  if (c < cols) {
    const __mmask16 m = vec::tail_mask(cols - c);
    const __m512 d = _mm512_maskz_sub_ps(m, _mm512_maskz_loadu_ps(m, row + c), vmean);
    vsq = _mm512_fmadd_ps(d, d, vsq);
  }
  const __m512 vinv = _mm512_set1_ps(1.0f / std::sqrt(vec::reduce_add(vsq) / n + eps));
  // Without a bias the same fused multiply-add adds 0: bit for bit what a zero bias gives.
  const auto bias = [&](std::int64_t at, __mmask16 m) {
    return beta != nullptr ? _mm512_maskz_loadu_ps(m, beta + at) : _mm512_setzero_ps();
  };
  for (c = 0; c + 16 <= cols; c += 16) {
    const __m512 d = _mm512_mul_ps(_mm512_sub_ps(_mm512_loadu_ps(row + c), vmean), vinv);
    _mm512_storeu_ps(row + c, _mm512_fmadd_ps(d, _mm512_loadu_ps(gamma + c), bias(c, 0xFFFF)));
  }
  if (c < cols) {
    const __mmask16 m = vec::tail_mask(cols - c);
    const __m512 d = _mm512_mul_ps(_mm512_sub_ps(_mm512_maskz_loadu_ps(m, row + c), vmean), vinv);
    _mm512_mask_storeu_ps(row + c, m,
                          _mm512_fmadd_ps(d, _mm512_maskz_loadu_ps(m, gamma + c), bias(c, m)));
  }
#else
  float sum = 0.0f;
  for (; c < cols; ++c) sum += row[c];
  const float mean = sum / n;
  float sq = 0.0f;
  for (c = 0; c < cols; ++c) {
    const float d = row[c] - mean;
    sq += d * d;
  }
  const float inv = 1.0f / std::sqrt(sq / n + eps);
  for (c = 0; c < cols; ++c)
    row[c] = (row[c] - mean) * inv * gamma[c] + (beta != nullptr ? beta[c] : 0.0f);
#endif
}

void softmax_row_impl(float* row, std::int64_t cols) {
#if defined(__AVX512F__)
  std::int64_t c = 0;
  const __mmask16 tail = vec::tail_mask(cols % 16);
  const std::int64_t full = cols - cols % 16;
  __m512 vmax = _mm512_set1_ps(-INFINITY);
  for (; c < full; c += 16) vmax = _mm512_max_ps(vmax, _mm512_loadu_ps(row + c));
  if (tail != 0) vmax = _mm512_mask_max_ps(vmax, tail, vmax, _mm512_maskz_loadu_ps(tail, row + c));
  const __m512 max = _mm512_set1_ps(vec::reduce_max(vmax));
  __m512 vsum = _mm512_setzero_ps();
  for (c = 0; c < full; c += 16) {
    const __m512 e = vec::exp(_mm512_sub_ps(_mm512_loadu_ps(row + c), max));
    _mm512_storeu_ps(row + c, e);
    vsum = _mm512_add_ps(vsum, e);
  }
  if (tail != 0) {
    const __m512 e = vec::exp(_mm512_sub_ps(_mm512_maskz_loadu_ps(tail, row + c), max));
    _mm512_mask_storeu_ps(row + c, tail, e);
    vsum = _mm512_mask_add_ps(vsum, tail, vsum, e);
  }
  const __m512 inv = _mm512_set1_ps(1.0f / vec::reduce_add(vsum));
  for (c = 0; c < full; c += 16)
    _mm512_storeu_ps(row + c, _mm512_mul_ps(_mm512_loadu_ps(row + c), inv));
  if (tail != 0)
    _mm512_mask_storeu_ps(row + c, tail, _mm512_mul_ps(_mm512_maskz_loadu_ps(tail, row + c), inv));
#elif defined(__AVX2__) && defined(__FMA__)
  // 8 lanes; the tail through masked loads (padded with -inf for the max, 0 after exp) so that
  // every element goes through the same exp.
  const std::int64_t full = cols - cols % 8;
  const __m256i tail = vec::tail_lanes(cols % 8);
  const __m256 tail_f = _mm256_castsi256_ps(tail);
  __m256 vmax = _mm256_set1_ps(-INFINITY);
  std::int64_t c = 0;
  for (; c < full; c += 8) vmax = _mm256_max_ps(vmax, _mm256_loadu_ps(row + c));
  if (c < cols) {
    const __m256 t = _mm256_blendv_ps(vmax, _mm256_maskload_ps(row + c, tail), tail_f);
    vmax = _mm256_max_ps(vmax, t);
  }
  const __m256 max = _mm256_set1_ps(vec::reduce_max(vmax));
  __m256 vsum = _mm256_setzero_ps();
  for (c = 0; c < full; c += 8) {
    const __m256 e = vec::exp(_mm256_sub_ps(_mm256_loadu_ps(row + c), max));
    _mm256_storeu_ps(row + c, e);
    vsum = _mm256_add_ps(vsum, e);
  }
  if (c < cols) {
    const __m256 e =
        _mm256_and_ps(vec::exp(_mm256_sub_ps(_mm256_maskload_ps(row + c, tail), max)), tail_f);
    _mm256_maskstore_ps(row + c, tail, e);
    vsum = _mm256_add_ps(vsum, e);
  }
  const __m256 inv = _mm256_set1_ps(1.0f / vec::reduce_add(vsum));
  for (c = 0; c < full; c += 8)
    _mm256_storeu_ps(row + c, _mm256_mul_ps(_mm256_loadu_ps(row + c), inv));
  if (c < cols)
    _mm256_maskstore_ps(row + c, tail, _mm256_mul_ps(_mm256_maskload_ps(row + c, tail), inv));
#else
  float max = row[0];
  for (std::int64_t c = 1; c < cols; ++c) max = std::max(max, row[c]);
  float sum = 0.0f;
  for (std::int64_t c = 0; c < cols; ++c) {
    row[c] = std::exp(row[c] - max);
    sum += row[c];
  }
  const float inv = 1.0f / sum;
  for (std::int64_t c = 0; c < cols; ++c) row[c] *= inv;
#endif
}

template <Activation kAct>
void activate_block(float* x, std::int64_t n) {
#if defined(__AVX512F__)
  std::int64_t i = 0;
  for (; i + 16 <= n; i += 16) _mm512_storeu_ps(x + i, vec::activate<kAct>(_mm512_loadu_ps(x + i)));
  if (i < n) {
    const __mmask16 m = vec::tail_mask(n - i);
    _mm512_mask_storeu_ps(x + i, m, vec::activate<kAct>(_mm512_maskz_loadu_ps(m, x + i)));
  }
#elif defined(__AVX2__) && defined(__FMA__)
  std::int64_t i = 0;
  for (; i + 8 <= n; i += 8) _mm256_storeu_ps(x + i, vec::activate<kAct>(_mm256_loadu_ps(x + i)));
  if (i < n) {
    const __m256i m = vec::tail_lanes(n - i);
    _mm256_maskstore_ps(x + i, m, vec::activate<kAct>(_mm256_maskload_ps(x + i, m)));
  }
#else
  for (std::int64_t i = 0; i < n; ++i) x[i] = vec::activate_scalar(x[i], kAct);
#endif
}

}  // namespace

void layer_norm(float* x, std::int64_t rows, std::int64_t cols, const float* gamma,
                const float* beta, float eps) {
#pragma omp parallel for schedule(static) if (rows * cols >= kParallelMinElements)
  for (std::int64_t r = 0; r < rows; ++r) layer_norm_row(x + r * cols, cols, gamma, beta, eps);
}

void activate(float* x, std::int64_t n, Activation act) {
  if (act == Activation::kIdentity) return;
  vec::with_activation(act, [&](auto kind) {
    const std::int64_t blocks = (n + kActivateBlock - 1) / kActivateBlock;
#pragma omp parallel for schedule(static) if (n >= kParallelMinElements)
    for (std::int64_t b = 0; b < blocks; ++b) {
      const std::int64_t begin = b * kActivateBlock;
      activate_block<decltype(kind)::value>(x + begin, std::min(kActivateBlock, n - begin));
    }
  });
}

void multiply(float* x, const float* y, std::int64_t n) {
#pragma omp parallel for schedule(static) if (n >= kParallelMinElements)
  for (std::int64_t i = 0; i < n; ++i) x[i] *= y[i];
}

void softmax_rows(float* x, std::int64_t rows, std::int64_t cols) {
#pragma omp parallel for schedule(static) if (rows * cols >= kParallelMinElements)
  for (std::int64_t r = 0; r < rows; ++r) softmax_row_impl(x + r * cols, cols);
}

void softmax_row(float* x, std::int64_t cols) { softmax_row_impl(x, cols); }

void embedding_gather(const float* table, std::int64_t dim, const std::int32_t* ids, std::int64_t n,
                      float* out, bool accumulate) {
#pragma omp parallel for schedule(static) if (n * dim >= kParallelMinElements)
  for (std::int64_t i = 0; i < n; ++i) {
    const float* src = table + static_cast<std::int64_t>(ids[i]) * dim;
    float* dst = out + i * dim;
    if (accumulate) {
      for (std::int64_t c = 0; c < dim; ++c) dst[c] += src[c];
    } else {
      std::memcpy(dst, src, static_cast<std::size_t>(dim) * sizeof(float));
    }
  }
}

void gather_row(const float* src, const std::int32_t* index, std::int32_t offset,
                std::int64_t count, float* dst) {
  std::int64_t c = 0;
#if defined(__AVX512F__)
  const __m512i shift = _mm512_set1_epi32(offset);
  for (; c + 16 <= count; c += 16) {
    const __m512i idx = _mm512_sub_epi32(_mm512_loadu_si512(index + c), shift);
    // The masked form with an explicit zero source: GCC 12 warns on the unmasked one.
    _mm512_storeu_ps(dst + c, _mm512_mask_i32gather_ps(_mm512_setzero_ps(), 0xFFFF, idx, src, 4));
  }
#endif
  for (; c < count; ++c) dst[c] = src[index[c] - offset];
}

constinit const ElementwiseKernels kElementwiseKernels{.path = kPath,
                                                       .layer_norm = &layer_norm,
                                                       .activate = &activate,
                                                       .multiply = &multiply,
                                                       .softmax_rows = &softmax_rows,
                                                       .softmax_row = &softmax_row,
                                                       .embedding_gather = &embedding_gather,
                                                       .gather_row = &gather_row};

}  // namespace onepass::kernels::ONEPASS_ISA
