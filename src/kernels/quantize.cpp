#include "kernels/quantize.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <type_traits>

#include "kernels/dispatch.h"
#include "kernels/vec_math.h"

#if defined(__AVX512F__)
#include <immintrin.h>
// GCC 12's AVX-512 headers start some intrinsics from a deliberately undefined register
// (_mm512_undefined_*), which -Wmaybe-uninitialized reports at every inlined use.
#if !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#endif

// Compiled once per instruction set (dispatch.h): everything here is in that compilation's
// namespace, and quantize.h's functions call through the table at the end.
namespace onepass::kernels::ONEPASS_ISA {
namespace {

// The instructions the code paths below use in this compilation.
#if defined(__AVX512BF16__)
constexpr const char* kPath = "avx512_bf16";
#elif defined(__AVX512F__)
constexpr const char* kPath = "avx512";
#elif defined(__AVX2__) && defined(__FMA__)
constexpr const char* kPath = "avx2";  // the int8 epilogue; the rest stays scalar
#else
constexpr const char* kPath = "scalar";
#endif

// Below this many elements the OpenMP fork costs more than the loop.
constexpr std::int64_t kParallelMinElements = 1 << 14;

std::uint16_t float_to_bf16(float f) {
  std::uint32_t bits = 0;
  std::memcpy(&bits, &f, sizeof bits);
  if ((bits & 0x7fffffffu) > 0x7f800000u)
    return static_cast<std::uint16_t>((bits >> 16) | 0x40u);  // quiet NaN
  bits += 0x7fffu + ((bits >> 16) & 1u);                      // round to nearest even
  return static_cast<std::uint16_t>(bits >> 16);
}

void row_min_max(const float* x, std::int64_t n, float& lo, float& hi) {
  std::int64_t i = 0;
  lo = 0.0f;
  hi = 0.0f;
#if defined(__AVX512F__)
  __m512 vlo = _mm512_setzero_ps(), vhi = _mm512_setzero_ps();
  for (; i + 16 <= n; i += 16) {
    const __m512 v = _mm512_loadu_ps(x + i);
    vlo = _mm512_min_ps(vlo, v);
    vhi = _mm512_max_ps(vhi, v);
  }
  lo = _mm512_reduce_min_ps(vlo);
  hi = _mm512_reduce_max_ps(vhi);
#endif
  for (; i < n; ++i) {
    lo = std::min(lo, x[i]);
    hi = std::max(hi, x[i]);
  }
}

// One row of the int8 Linear's epilogue in a single pass over the s32 accumulators:
// y (+)= act(sa · sw[c] · (acc[c] − za · Σk qw[c, k]) + b[c]).
template <Activation kAct, bool kBias, bool kAccumulate>
void dequantize_row(const std::int32_t* a, std::int64_t cols, float sa, std::int32_t za,
                    const float* col_scales, const std::int32_t* col_sums, const float* bias,
                    float* dst) {
#if defined(__AVX512F__)
  const __m512i vza = _mm512_set1_epi32(za);
  const __m512 vsa = _mm512_set1_ps(sa);
  auto lanes = [&](std::int64_t c, __mmask16 m) {
    const __m512i centred =
        _mm512_sub_epi32(_mm512_maskz_loadu_epi32(m, a + c),
                         _mm512_mullo_epi32(vza, _mm512_maskz_loadu_epi32(m, col_sums + c)));
    __m512 v = _mm512_mul_ps(_mm512_cvtepi32_ps(centred),
                             _mm512_mul_ps(vsa, _mm512_maskz_loadu_ps(m, col_scales + c)));
    if constexpr (kBias) v = _mm512_add_ps(v, _mm512_maskz_loadu_ps(m, bias + c));
    v = vec::activate<kAct>(v);
    if constexpr (kAccumulate) v = _mm512_add_ps(_mm512_maskz_loadu_ps(m, dst + c), v);
    _mm512_mask_storeu_ps(dst + c, m, v);
  };
  std::int64_t c = 0;
  for (; c + 16 <= cols; c += 16) lanes(c, 0xffff);
  if (c < cols) lanes(c, vec::tail_mask(cols - c));
#elif defined(__AVX2__) && defined(__FMA__)
  const __m256i vza = _mm256_set1_epi32(za);
  const __m256 vsa = _mm256_set1_ps(sa);
  // The same arithmetic 8 lanes at a time; the tail through masked loads and stores.
  auto lanes = [&](std::int64_t c, __m256i m, bool full) {
    const __m256i centred =
        _mm256_sub_epi32(_mm256_maskload_epi32(a + c, m),
                         _mm256_mullo_epi32(vza, _mm256_maskload_epi32(col_sums + c, m)));
    __m256 v = _mm256_mul_ps(_mm256_cvtepi32_ps(centred),
                             _mm256_mul_ps(vsa, _mm256_maskload_ps(col_scales + c, m)));
    if constexpr (kBias) v = _mm256_add_ps(v, _mm256_maskload_ps(bias + c, m));
    v = vec::activate<kAct>(v);
    if constexpr (kAccumulate) v = _mm256_add_ps(_mm256_maskload_ps(dst + c, m), v);
    if (full) {
      _mm256_storeu_ps(dst + c, v);
    } else {
      _mm256_maskstore_ps(dst + c, m, v);
    }
  };
  std::int64_t c = 0;
  for (; c + 8 <= cols; c += 8) lanes(c, _mm256_set1_epi32(-1), true);
  if (c < cols) lanes(c, vec::tail_lanes(cols - c), false);
#else
  for (std::int64_t c = 0; c < cols; ++c) {
    float v = static_cast<float>(a[c] - za * col_sums[c]) * (sa * col_scales[c]);
    if constexpr (kBias) v += bias[c];
    v = vec::activate_scalar(v, kAct);
    dst[c] = kAccumulate ? dst[c] + v : v;
  }
#endif
}

}  // namespace

void convert_rows_to_bf16(const float* x, std::int64_t rows, std::int64_t cols, std::int64_t ldx,
                          std::uint16_t* out) {
#pragma omp parallel for schedule(static) if (rows * cols >= kParallelMinElements)
  for (std::int64_t r = 0; r < rows; ++r) {
    const float* src = x + r * ldx;
    std::uint16_t* dst = out + r * cols;
    std::int64_t c = 0;
#if defined(__AVX512BF16__)
    for (; c + 16 <= cols; c += 16) {
      const __m256bh v = _mm512_cvtneps_pbh(_mm512_loadu_ps(src + c));
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst + c), reinterpret_cast<const __m256i&>(v));
    }
#endif
    for (; c < cols; ++c) dst[c] = float_to_bf16(src[c]);
  }
}

void quantize_rows_u8(const float* x, std::int64_t rows, std::int64_t cols, std::int64_t ldx,
                      std::uint8_t* q, float* scales, std::int32_t* zero_points) {
#pragma omp parallel for schedule(static) if (rows * cols >= kParallelMinElements)
  for (std::int64_t r = 0; r < rows; ++r) {
    const float* src = x + r * ldx;
    std::uint8_t* dst = q + r * cols;
    float lo = 0.0f, hi = 0.0f;
    row_min_max(src, cols, lo, hi);
    float scale = (hi - lo) / 255.0f;
    if (!(scale > 0.0f) || !std::isfinite(scale))
      scale = 1.0f;  // all zeros (or a NaN row: stays NaN below)
    const float zp = std::clamp(std::nearbyint(-lo / scale), 0.0f, 255.0f);
    const float inv = 1.0f / scale;
    scales[r] = scale;
    zero_points[r] = static_cast<std::int32_t>(zp);
    std::int64_t c = 0;
#if defined(__AVX512F__)
    const __m512 vinv = _mm512_set1_ps(inv), vzp = _mm512_set1_ps(zp);
    const __m512 vmin = _mm512_setzero_ps(), vmax = _mm512_set1_ps(255.0f);
    for (; c + 16 <= cols; c += 16) {
      __m512 v = _mm512_fmadd_ps(_mm512_loadu_ps(src + c), vinv, vzp);
      v = _mm512_min_ps(_mm512_max_ps(v, vmin), vmax);
      const __m512i i32 = _mm512_cvtps_epi32(v);  // MXCSR default: round to nearest even
      _mm512_mask_cvtusepi32_storeu_epi8(dst + c, 0xffff, i32);
    }
#endif
    for (; c < cols; ++c) {
      const float v = std::clamp(std::nearbyint(src[c] * inv) + zp, 0.0f, 255.0f);
      dst[c] = static_cast<std::uint8_t>(v);
    }
  }
}

void quantize_weights_s8(const float* w, std::int64_t out, std::int64_t in, float scale_multiplier,
                         std::int8_t* q, float* scales, std::int32_t* col_sums) {
#pragma omp parallel for schedule(static)
  for (std::int64_t c = 0; c < out; ++c) {
    const float* row = w + c * in;
    std::int8_t* dst = q + c * in;
    std::int64_t k = 0;
    float amax = 0.0f;
#if defined(__AVX512F__)
    // Whole rows at 16 lanes (int8 load time went to this scalar loop); same rounding (nearest
    // even) and clamping as the scalar tail, so the result does not depend on the path.
    __m512 vamax = _mm512_setzero_ps();
    for (; k + 16 <= in; k += 16)
      vamax = _mm512_max_ps(_mm512_abs_ps(_mm512_loadu_ps(row + k)), vamax);
    amax = _mm512_reduce_max_ps(vamax);
#endif
    for (; k < in; ++k) amax = std::max(amax, std::fabs(row[k]));
    float scale = amax / 127.0f * scale_multiplier;
    if (!(scale > 0.0f)) scale = 1.0f;
    const float inv = 1.0f / scale;
    std::int32_t sum = 0;
    k = 0;
#if defined(__AVX512F__)
    const __m512 vinv = _mm512_set1_ps(inv), lo = _mm512_set1_ps(-127.0f),
                 hi = _mm512_set1_ps(127.0f);
    __m512i vsum = _mm512_setzero_si512();
    for (; k + 16 <= in; k += 16) {
      __m512 v = _mm512_roundscale_ps(_mm512_mul_ps(_mm512_loadu_ps(row + k), vinv),
                                      _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
      v = _mm512_min_ps(_mm512_max_ps(v, lo), hi);
      const __m512i i32 = _mm512_cvtps_epi32(v);
      _mm512_mask_cvtsepi32_storeu_epi8(dst + k, 0xffff, i32);
      vsum = _mm512_add_epi32(vsum, i32);
    }
    sum = _mm512_reduce_add_epi32(vsum);
#endif
    for (; k < in; ++k) {
      const float v = std::clamp(std::nearbyint(row[k] * inv), -127.0f, 127.0f);
      dst[k] = static_cast<std::int8_t>(v);
      sum += static_cast<std::int32_t>(v);
    }
    scales[c] = scale;
    col_sums[c] = sum;
  }
}

void dequantize_rows(const std::int32_t* acc, std::int64_t rows, std::int64_t cols,
                     const float* row_scales, const std::int32_t* zero_points,
                     const float* col_scales, const std::int32_t* col_sums, const float* bias,
                     Activation act, float* y, bool accumulate) {
  // One switch per call; inside, every row runs a loop with no branches.
  vec::with_activation(act, [&](auto kind) {
    constexpr Activation kAct = decltype(kind)::value;
    auto rows_with = [&](auto with_bias, auto with_accumulate) {
#pragma omp parallel for schedule(static) if (rows * cols >= kParallelMinElements)
      for (std::int64_t r = 0; r < rows; ++r) {
        dequantize_row<kAct, decltype(with_bias)::value, decltype(with_accumulate)::value>(
            acc + r * cols, cols, row_scales[r], zero_points[r], col_scales, col_sums, bias,
            y + r * cols);
      }
    };
    using Yes = std::true_type;
    using No = std::false_type;
    if (bias != nullptr) {
      accumulate ? rows_with(Yes{}, Yes{}) : rows_with(Yes{}, No{});
    } else {
      accumulate ? rows_with(No{}, Yes{}) : rows_with(No{}, No{});
    }
  });
}

constinit const QuantizeKernels kQuantizeKernels{.path = kPath,
                                                 .convert_rows_to_bf16 = &convert_rows_to_bf16,
                                                 .quantize_rows_u8 = &quantize_rows_u8,
                                                 .quantize_weights_s8 = &quantize_weights_s8,
                                                 .dequantize_rows = &dequantize_rows};

}  // namespace onepass::kernels::ONEPASS_ISA
