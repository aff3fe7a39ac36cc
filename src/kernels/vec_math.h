// Vectorised exp, erf, the activations built on them and horizontal sum/max, for the row
// kernels (softmax, layer_norm, GELU in activate() and in the int8 Linear's epilogue). libm's
// scalar expf/erff were 11% of an int8 mDeBERTa forward; these run 16 lanes per instruction.
//
// AVX-512 versions where the build targets it (the release preset's -march=native on the
// Zen4 servers), the std:: functions otherwise: callers use the scalar *_scalar names for
// tails only when __AVX512F__ is undefined (with AVX-512 tails go through masked loads).
//
// Accuracy (tests/kernels/vec_math_test.cpp sweeps them against double-precision libm):
//   exp: relative error < 3e-7 for results in the normal range; +inf above ~88.72,
//        0 below ~-103.97 (subnormals flush towards 0), NaN stays NaN.
//   erf: relative error < 5e-7 everywhere (odd polynomial near 0, so tiny inputs keep their
//        relative accuracy), exactly ±1 for large inputs, NaN stays NaN.
//   gelu_erf: 1 + erf(z) is computed as erfc(|z|) for z < 0, so the negative tail keeps its
//        relative accuracy instead of cancelling (|error| < 1e-6 · max(1, |x|)).
// Every function is elementwise: a lane's result never depends on the other lanes, so tails
// and row lengths cannot change a value (batch invariance).
#pragma once

#include <cmath>
#include <type_traits>

#include "kernels/activation.h"

#if defined(__AVX512F__)
#include <immintrin.h>
#endif

// Every function here lives in an inline namespace named after the instruction set its file is
// compiled for. A build whose baseline lacks AVX-512 still compiles stream_gemm_avx512.cpp for
// it: without distinct names, that file's copies of these inline functions would share symbols
// with the baseline copies, and the linker could keep the AVX-512 ones for every caller.
#if defined(__AVX512F__)
#define ONEPASS_VEC_ISA avx512
#else
#define ONEPASS_VEC_ISA baseline
#endif

namespace onepass::kernels::vec {
inline namespace ONEPASS_VEC_ISA {

// Scalar forms of the same functions (std:: based; used where AVX-512 is unavailable).
inline float exp_scalar(float x) { return std::exp(x); }
inline float erf_scalar(float x) { return std::erf(x); }
inline float gelu_erf_scalar(float x) {
  return 0.5f * x * (1.0f + std::erf(x * 0.70710678118654752f));
}
inline float gelu_tanh_scalar(float x) {
  const float inner = 0.7978845608028654f * (x + 0.044715f * x * x * x);
  return 0.5f * x * (1.0f + std::tanh(inner));
}
// x · sigmoid(k · x): SiLU (k = 1) and quick_gelu (k = 1.702).
inline float x_sigmoid_scalar(float x, float k) { return x / (1.0f + std::exp(-k * x)); }

#if defined(__AVX512F__)

// e^x: x = n·ln2 + r with |r| <= ln2/2 (ln2 split in two so n·ln2 stays exact), e^r by its
// degree-7 Taylor polynomial (truncation < 6e-9 on that interval), 2^n applied by vscalefps,
// which also produces the overflow (+inf) and underflow (0) results.
inline __m512 exp(__m512 x) {
  // max/min return their second operand when either is NaN: x goes second so NaN survives.
  x = _mm512_max_ps(_mm512_set1_ps(-104.0f), x);
  x = _mm512_min_ps(_mm512_set1_ps(89.0f), x);
  const __m512 n = _mm512_roundscale_ps(_mm512_mul_ps(x, _mm512_set1_ps(1.44269504088896341f)),
                                        _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m512 r =
      _mm512_fnmadd_ps(n, _mm512_set1_ps(0.693145751953125f), x);  // ln2 high part (exact n·hi)
  r = _mm512_fnmadd_ps(n, _mm512_set1_ps(1.428606765330187e-06f), r);  // ln2 low part
  __m512 p = _mm512_set1_ps(1.0f / 5040.0f);
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f / 720.0f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f / 120.0f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f / 24.0f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f / 6.0f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(0.5f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f));
  return _mm512_scalef_ps(p, n);
}

namespace detail {

// erf(a) / a as a polynomial in a² for 0 <= a <= 1 (least-squares fit in relative error,
// |error| < 2e-9 before float rounding).
inline __m512 erf_small(__m512 a) {
  const __m512 a2 = _mm512_mul_ps(a, a);
  __m512 p = _mm512_set1_ps(7.897490286e-05f);
  p = _mm512_fmadd_ps(p, a2, _mm512_set1_ps(-8.024125127e-04f));
  p = _mm512_fmadd_ps(p, a2, _mm512_set1_ps(5.190025549e-03f));
  p = _mm512_fmadd_ps(p, a2, _mm512_set1_ps(-2.685479261e-02f));
  p = _mm512_fmadd_ps(p, a2, _mm512_set1_ps(1.128361225e-01f));
  p = _mm512_fmadd_ps(p, a2, _mm512_set1_ps(-3.761262894e-01f));
  p = _mm512_fmadd_ps(p, a2, _mm512_set1_ps(1.128379226e+00f));
  return _mm512_mul_ps(a, p);
}

// erfc(a) for a >= 1: e^(-a²) · R(t), t = 1 / (1 + 0.3275911 a), R a degree-8 polynomial fitted
// in relative error over a in [1, 10] (2e-8 with float coefficients; beyond 10, e^(-a²) is
// (nearly) 0). a² is split into its
// rounded value and the exact remainder so the exponent carries no rounding error.
inline __m512 erfc_large(__m512 a) {
  a = _mm512_min_ps(_mm512_set1_ps(11.0f), a);  // e^(-121) is 0 in float; NaN survives
  const __m512 a2 = _mm512_mul_ps(a, a);
  const __m512 a2_lo = _mm512_fmsub_ps(a, a, a2);
  __m512 e = exp(_mm512_sub_ps(_mm512_setzero_ps(), a2));
  e = _mm512_fnmadd_ps(e, a2_lo, e);  // e^(-a2 - lo) ≈ e^(-a2) · (1 - lo)
  const __m512 t =
      _mm512_div_ps(_mm512_set1_ps(1.0f),
                    _mm512_fmadd_ps(_mm512_set1_ps(3.275910914e-01f), a, _mm512_set1_ps(1.0f)));
  __m512 p = _mm512_set1_ps(-1.422054023e-01f);
  p = _mm512_fmadd_ps(p, t, _mm512_set1_ps(5.099726319e-01f));
  p = _mm512_fmadd_ps(p, t, _mm512_set1_ps(-4.446855187e-01f));
  p = _mm512_fmadd_ps(p, t, _mm512_set1_ps(5.061646104e-01f));
  p = _mm512_fmadd_ps(p, t, _mm512_set1_ps(-1.489376184e-02f));
  p = _mm512_fmadd_ps(p, t, _mm512_set1_ps(2.240540683e-01f));
  p = _mm512_fmadd_ps(p, t, _mm512_set1_ps(1.759282649e-01f));
  p = _mm512_fmadd_ps(p, t, _mm512_set1_ps(1.857404560e-01f));
  p = _mm512_fmadd_ps(p, t, _mm512_set1_ps(-4.108571011e-05f));
  return _mm512_mul_ps(e, p);
}

inline __m512 abs(__m512 x) { return _mm512_abs_ps(x); }

}  // namespace detail

inline __m512 erf(__m512 x) {
  const __m512 a = detail::abs(x);
  const __mmask16 small = _mm512_cmp_ps_mask(a, _mm512_set1_ps(1.0f), _CMP_LE_OQ);
  __m512 result = detail::erf_small(a);
  if (small != 0xffff) {
    const __m512 large = _mm512_sub_ps(_mm512_set1_ps(1.0f), detail::erfc_large(a));
    result = _mm512_mask_blend_ps(small, large, result);
  }
  // Copy x's sign onto |erf|: keeps -0 and NaN as they are.
  const __m512i sign = _mm512_and_si512(_mm512_castps_si512(x), _mm512_set1_epi32(INT32_MIN));
  return _mm512_castsi512_ps(_mm512_or_si512(_mm512_castps_si512(result), sign));
}

// 0.5 · x · (1 + erf(x / √2)), transformers' exact GELU.
inline __m512 gelu_erf(__m512 x) {
  const __m512 z = _mm512_mul_ps(x, _mm512_set1_ps(0.70710678118654752f));
  const __m512 a = detail::abs(z);
  const __m512 one = _mm512_set1_ps(1.0f);
  const __mmask16 small = _mm512_cmp_ps_mask(a, one, _CMP_LE_OQ);
  const __mmask16 negative = _mm512_cmp_ps_mask(z, _mm512_setzero_ps(), _CMP_LT_OQ);
  const __m512 e = detail::erf_small(a);
  // |z| <= 1: 1 ± erf(|z|).
  __m512 one_plus = _mm512_mask_sub_ps(_mm512_add_ps(one, e), negative, one, e);
  if (small != 0xffff) {
    // |z| > 1: 2 - erfc(|z|) for z > 0, erfc(|z|) itself for z < 0 (no cancellation).
    const __m512 c = detail::erfc_large(a);
    const __m512 large = _mm512_mask_blend_ps(negative, _mm512_sub_ps(_mm512_set1_ps(2.0f), c), c);
    one_plus = _mm512_mask_blend_ps(small, large, one_plus);
  }
  return _mm512_mul_ps(_mm512_mul_ps(_mm512_set1_ps(0.5f), x), one_plus);
}

// x · sigmoid(k · x) = x / (1 + e^(-k·x)).
inline __m512 x_sigmoid(__m512 x, float k) {
  const __m512 e = exp(_mm512_mul_ps(_mm512_set1_ps(-k), x));
  return _mm512_div_ps(x, _mm512_add_ps(_mm512_set1_ps(1.0f), e));
}

// 0.5 · x · (1 + tanh(u)) with u = √(2/π)(x + 0.044715 x³), rewritten as x · sigmoid(2u): the
// same function without tanh's cancellation.
inline __m512 gelu_tanh(__m512 x) {
  const __m512 x2 = _mm512_mul_ps(x, x);
  const __m512 u =
      _mm512_mul_ps(_mm512_mul_ps(_mm512_set1_ps(0.7978845608028654f), x),
                    _mm512_fmadd_ps(_mm512_set1_ps(0.044715f), x2, _mm512_set1_ps(1.0f)));
  const __m512 e = exp(_mm512_mul_ps(_mm512_set1_ps(-2.0f), u));
  return _mm512_div_ps(x, _mm512_add_ps(_mm512_set1_ps(1.0f), e));
}

// The first n (< 16) lanes, for a row's tail.
inline __mmask16 tail_mask(long n) { return static_cast<__mmask16>((1u << n) - 1u); }

// The first min(count, 16) lanes (none for count <= 0): a column block's mask at any offset.
inline __mmask16 lane_mask(long count) {
  if (count >= 16) return 0xffff;
  return count <= 0 ? __mmask16{0} : tail_mask(count);
}

// Horizontal sum and max, in the same order as GCC's _mm512_reduce_add_ps/_mm512_reduce_max_ps
// (256-bit halves, 128-bit quarters, then pairs), so results match them bit for bit. GCC 12
// builds those intrinsics' half extracts (and _mm512_castps512_ps256) from a deliberately
// undefined register, which -Wuninitialized reports at every inlined use under -O3; the
// zero-masked extract with every lane kept is the same instruction without that register.
namespace detail {
template <int kUpper>
inline __m256 half(__m512 v) {
  return _mm256_castpd_ps(_mm512_maskz_extractf64x4_pd(0xFF, _mm512_castps_pd(v), kUpper));
}
}  // namespace detail

inline float reduce_add(__m512 v) {
  const __m256 s8 = _mm256_add_ps(detail::half<1>(v), detail::half<0>(v));
  const __m128 s4 = _mm_add_ps(_mm256_extractf128_ps(s8, 1), _mm256_castps256_ps128(s8));
  const __m128 s2 = _mm_add_ps(s4, _mm_shuffle_ps(s4, s4, _MM_SHUFFLE(1, 0, 3, 2)));
  return _mm_cvtss_f32(s2) + _mm_cvtss_f32(_mm_shuffle_ps(s2, s2, _MM_SHUFFLE(1, 1, 1, 1)));
}

// max_ps returns its second operand when either is NaN; the operand order is GCC's too.
inline float reduce_max(__m512 v) {
  const __m256 m8 = _mm256_max_ps(detail::half<1>(v), detail::half<0>(v));
  const __m128 m4 = _mm_max_ps(_mm256_extractf128_ps(m8, 1), _mm256_castps256_ps128(m8));
  const __m128 m2 = _mm_max_ps(m4, _mm_shuffle_ps(m4, m4, _MM_SHUFFLE(1, 0, 3, 2)));
  const __m128 m1 = _mm_max_ps(m2, _mm_shuffle_ps(m2, m2, _MM_SHUFFLE(0, 1, 0, 1)));
  return _mm_cvtss_f32(m1);
}

// act(x) lane by lane, the activation fixed at compile time so loops carry no switch.
template <Activation kAct>
inline __m512 activate(__m512 x) {
  if constexpr (kAct == Activation::kIdentity) {
    return x;
  } else if constexpr (kAct == Activation::kGeluErf) {
    return gelu_erf(x);
  } else if constexpr (kAct == Activation::kGeluTanh) {
    return gelu_tanh(x);
  } else if constexpr (kAct == Activation::kQuickGelu) {
    return x_sigmoid(x, 1.702f);
  } else if constexpr (kAct == Activation::kSilu) {
    return x_sigmoid(x, 1.0f);
  } else if constexpr (kAct == Activation::kRelu) {
    return _mm512_max_ps(_mm512_setzero_ps(), x);  // NaN survives (second operand)
  } else {
    // tanh: only poolers use it (one row per sequence); libm keeps its relative accuracy.
    alignas(64) float lanes[16];
    _mm512_store_ps(lanes, x);
    for (float& v : lanes) v = std::tanh(v);
    return _mm512_load_ps(lanes);
  }
}

#endif  // __AVX512F__

// The scalar twin of activate<kAct> (builds without AVX-512).
inline float activate_scalar(float x, Activation act) {
  switch (act) {
    case Activation::kIdentity:
      return x;
    case Activation::kGeluErf:
      return gelu_erf_scalar(x);
    case Activation::kGeluTanh:
      return gelu_tanh_scalar(x);
    case Activation::kQuickGelu:
      return x_sigmoid_scalar(x, 1.702f);
    case Activation::kRelu:
      return x > 0.0f ? x : 0.0f;
    case Activation::kSilu:
      return x_sigmoid_scalar(x, 1.0f);
    case Activation::kTanh:
      return std::tanh(x);
  }
  return x;
}

// Calls f(std::integral_constant<Activation, act>{}) : one switch per call, not per element.
template <class F>
inline void with_activation(Activation act, F&& f) {
  switch (act) {
    case Activation::kIdentity:
      f(std::integral_constant<Activation, Activation::kIdentity>{});
      return;
    case Activation::kGeluErf:
      f(std::integral_constant<Activation, Activation::kGeluErf>{});
      return;
    case Activation::kGeluTanh:
      f(std::integral_constant<Activation, Activation::kGeluTanh>{});
      return;
    case Activation::kQuickGelu:
      f(std::integral_constant<Activation, Activation::kQuickGelu>{});
      return;
    case Activation::kRelu:
      f(std::integral_constant<Activation, Activation::kRelu>{});
      return;
    case Activation::kSilu:
      f(std::integral_constant<Activation, Activation::kSilu>{});
      return;
    case Activation::kTanh:
      f(std::integral_constant<Activation, Activation::kTanh>{});
      return;
  }
}

}  // namespace ONEPASS_VEC_ISA
}  // namespace onepass::kernels::vec
