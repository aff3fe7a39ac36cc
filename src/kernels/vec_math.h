// Vectorised exp, erf, the activations built on them and horizontal sum/max, for the row
// kernels (softmax, layer_norm, GELU in activate() and in the int8 Linear's epilogue). libm's
// scalar expf/erff were 11% of an int8 mDeBERTa forward; these run 16 lanes per instruction.
//
// AVX-512 versions (16 lanes) where the build targets it (the release preset's -march=native
// on an AVX-512 machine), AVX2 + FMA versions (8 lanes) where it targets x86-64-v3 (the
// container image), both from one template per function (tails go through masked loads); the
// std:: functions otherwise.
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
#include <cstring>
#include <type_traits>

#include "kernels/activation.h"

#if defined(__AVX512F__) || defined(__AVX2__)
#include <immintrin.h>
#endif

// Every function here lives in an inline namespace named after the instruction set its file is
// compiled for. A build whose baseline lacks AVX-512 (or BF16) still compiles some files for it
// (dispatch.h, stream_gemm_avx512.cpp): without distinct names, those files' copies of these
// inline functions would share symbols with the baseline copies, and the linker could keep the
// AVX-512 ones for every caller.
#if defined(__AVX512BF16__)
#define ONEPASS_VEC_ISA avx512_bf16
#elif defined(__AVX512F__)
#define ONEPASS_VEC_ISA avx512
#else
#define ONEPASS_VEC_ISA baseline
#endif

namespace onepass::kernels::vec {
inline namespace ONEPASS_VEC_ISA {

// Scalar forms of the same functions (std:: based; for builds with neither AVX-512 nor AVX2).
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

namespace detail {

// The functions below are written once, over the vector operations of an instruction set:
// Avx512 (16 lanes, comparisons into k registers) and Avx2 (AVX2 + FMA, 8 lanes, comparisons
// as lane masks). Both run the same operations in the same order: the same polynomials, the
// same rounding steps.
#if defined(__AVX512F__)
struct Avx512 {
  using V = __m512;
  using Mask = __mmask16;
  static V set1(float f) { return _mm512_set1_ps(f); }
  static V zero() { return _mm512_setzero_ps(); }
  static V add(V a, V b) { return _mm512_add_ps(a, b); }
  static V sub(V a, V b) { return _mm512_sub_ps(a, b); }
  static V mul(V a, V b) { return _mm512_mul_ps(a, b); }
  static V div(V a, V b) { return _mm512_div_ps(a, b); }
  static V fmadd(V a, V b, V c) { return _mm512_fmadd_ps(a, b, c); }    // a·b + c
  static V fnmadd(V a, V b, V c) { return _mm512_fnmadd_ps(a, b, c); }  // c - a·b
  static V fmsub(V a, V b, V c) { return _mm512_fmsub_ps(a, b, c); }    // a·b - c
  static V max(V a, V b) { return _mm512_max_ps(a, b); }                // b when either is NaN
  static V min(V a, V b) { return _mm512_min_ps(a, b); }
  static V round(V x) {
    return _mm512_roundscale_ps(x, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  }
  // p · 2^n for integral n (vscalefps: also the overflow and subnormal results).
  static V scale(V p, V n) { return _mm512_scalef_ps(p, n); }
  static V abs(V x) { return _mm512_abs_ps(x); }
  // |magnitude| with x's sign bit: keeps -0 and NaN as they are.
  static V with_sign_of(V magnitude, V x) {
    const __m512i sign = _mm512_and_si512(_mm512_castps_si512(x), _mm512_set1_epi32(INT32_MIN));
    return _mm512_castsi512_ps(_mm512_or_si512(_mm512_castps_si512(magnitude), sign));
  }
  static Mask le(V a, V b) { return _mm512_cmp_ps_mask(a, b, _CMP_LE_OQ); }
  static Mask lt(V a, V b) { return _mm512_cmp_ps_mask(a, b, _CMP_LT_OQ); }
  static bool all(Mask m) { return m == 0xffff; }
  static V select(Mask m, V if_set, V otherwise) {
    return _mm512_mask_blend_ps(m, otherwise, if_set);
  }
};
#endif

#if defined(__AVX2__) && defined(__FMA__)
struct Avx2 {
  using V = __m256;
  using Mask = __m256;
  static V set1(float f) { return _mm256_set1_ps(f); }
  static V zero() { return _mm256_setzero_ps(); }
  static V add(V a, V b) { return _mm256_add_ps(a, b); }
  static V sub(V a, V b) { return _mm256_sub_ps(a, b); }
  static V mul(V a, V b) { return _mm256_mul_ps(a, b); }
  static V div(V a, V b) { return _mm256_div_ps(a, b); }
  static V fmadd(V a, V b, V c) { return _mm256_fmadd_ps(a, b, c); }
  static V fnmadd(V a, V b, V c) { return _mm256_fnmadd_ps(a, b, c); }
  static V fmsub(V a, V b, V c) { return _mm256_fmsub_ps(a, b, c); }
  static V max(V a, V b) { return _mm256_max_ps(a, b); }
  static V min(V a, V b) { return _mm256_min_ps(a, b); }
  static V round(V x) { return _mm256_round_ps(x, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC); }
  // p · 2^n for integral n in [-150, 128] (exp's range): 2^n as two powers of two in the
  // normal range, so that only the last product rounds (into a subnormal, or to inf or 0), as
  // vscalefps does. A NaN n comes with a NaN p, and the product stays NaN.
  static V scale(V p, V n) {
    const __m256i whole = _mm256_cvtps_epi32(n);
    const __m256i half = _mm256_srai_epi32(whole, 1);
    const __m256i rest = _mm256_sub_epi32(whole, half);
    const auto pow2 = [](__m256i k) {
      return _mm256_castsi256_ps(
          _mm256_slli_epi32(_mm256_add_epi32(k, _mm256_set1_epi32(127)), 23));
    };
    return _mm256_mul_ps(_mm256_mul_ps(p, pow2(half)), pow2(rest));
  }
  static V abs(V x) { return _mm256_andnot_ps(_mm256_set1_ps(-0.0f), x); }
  static V with_sign_of(V magnitude, V x) {
    return _mm256_or_ps(magnitude, _mm256_and_ps(x, _mm256_set1_ps(-0.0f)));
  }
  static Mask le(V a, V b) { return _mm256_cmp_ps(a, b, _CMP_LE_OQ); }
  static Mask lt(V a, V b) { return _mm256_cmp_ps(a, b, _CMP_LT_OQ); }
  static bool all(Mask m) { return _mm256_movemask_ps(m) == 0xff; }
  static V select(Mask m, V if_set, V otherwise) { return _mm256_blendv_ps(otherwise, if_set, m); }
};
#endif

// e^x: x = n·ln2 + r with |r| <= ln2/2 (ln2 split in two so n·ln2 stays exact), e^r by its
// degree-7 Taylor polynomial (truncation < 6e-9 on that interval), then scaled by 2^n, which
// also produces the overflow (+inf) and underflow (0) results.
template <class I>
inline typename I::V exp(typename I::V x) {
  // max/min return their second operand when either is NaN: x goes second so NaN survives.
  x = I::max(I::set1(-104.0f), x);
  x = I::min(I::set1(89.0f), x);
  const auto n = I::round(I::mul(x, I::set1(1.44269504088896341f)));
  auto r = I::fnmadd(n, I::set1(0.693145751953125f), x);  // ln2 high part (exact n·hi)
  r = I::fnmadd(n, I::set1(1.428606765330187e-06f), r);   // ln2 low part
  auto p = I::set1(1.0f / 5040.0f);
  p = I::fmadd(p, r, I::set1(1.0f / 720.0f));
  p = I::fmadd(p, r, I::set1(1.0f / 120.0f));
  p = I::fmadd(p, r, I::set1(1.0f / 24.0f));
  p = I::fmadd(p, r, I::set1(1.0f / 6.0f));
  p = I::fmadd(p, r, I::set1(0.5f));
  p = I::fmadd(p, r, I::set1(1.0f));
  p = I::fmadd(p, r, I::set1(1.0f));
  return I::scale(p, n);
}

// erf(a) / a as a polynomial in a² for 0 <= a <= 1 (least-squares fit in relative error,
// |error| < 2e-9 before float rounding).
template <class I>
inline typename I::V erf_small(typename I::V a) {
  const auto a2 = I::mul(a, a);
  auto p = I::set1(7.897490286e-05f);
  p = I::fmadd(p, a2, I::set1(-8.024125127e-04f));
  p = I::fmadd(p, a2, I::set1(5.190025549e-03f));
  p = I::fmadd(p, a2, I::set1(-2.685479261e-02f));
  p = I::fmadd(p, a2, I::set1(1.128361225e-01f));
  p = I::fmadd(p, a2, I::set1(-3.761262894e-01f));
  p = I::fmadd(p, a2, I::set1(1.128379226e+00f));
  return I::mul(a, p);
}

// erfc(a) for a >= 1: e^(-a²) · R(t), t = 1 / (1 + 0.3275911 a), R a degree-8 polynomial fitted
// in relative error over a in [1, 10] (2e-8 with float coefficients; beyond 10, e^(-a²) is
// (nearly) 0). a² is split into its rounded value and the exact remainder so the exponent
// carries no rounding error.
template <class I>
inline typename I::V erfc_large(typename I::V a) {
  a = I::min(I::set1(11.0f), a);  // e^(-121) is 0 in float; NaN survives
  const auto a2 = I::mul(a, a);
  const auto a2_lo = I::fmsub(a, a, a2);
  auto e = exp<I>(I::sub(I::zero(), a2));
  e = I::fnmadd(e, a2_lo, e);  // e^(-a2 - lo) ≈ e^(-a2) · (1 - lo)
  const auto t = I::div(I::set1(1.0f), I::fmadd(I::set1(3.275910914e-01f), a, I::set1(1.0f)));
  auto p = I::set1(-1.422054023e-01f);
  p = I::fmadd(p, t, I::set1(5.099726319e-01f));
  p = I::fmadd(p, t, I::set1(-4.446855187e-01f));
  p = I::fmadd(p, t, I::set1(5.061646104e-01f));
  p = I::fmadd(p, t, I::set1(-1.489376184e-02f));
  p = I::fmadd(p, t, I::set1(2.240540683e-01f));
  p = I::fmadd(p, t, I::set1(1.759282649e-01f));
  p = I::fmadd(p, t, I::set1(1.857404560e-01f));
  p = I::fmadd(p, t, I::set1(-4.108571011e-05f));
  return I::mul(e, p);
}

template <class I>
inline typename I::V erf(typename I::V x) {
  const auto a = I::abs(x);
  const auto small = I::le(a, I::set1(1.0f));
  auto result = erf_small<I>(a);
  if (!I::all(small)) {
    const auto large = I::sub(I::set1(1.0f), erfc_large<I>(a));
    result = I::select(small, result, large);
  }
  return I::with_sign_of(result, x);
}

// 0.5 · x · (1 + erf(x / √2)), transformers' exact GELU.
template <class I>
inline typename I::V gelu_erf(typename I::V x) {
  const auto z = I::mul(x, I::set1(0.70710678118654752f));
  const auto a = I::abs(z);
  const auto one = I::set1(1.0f);
  const auto small = I::le(a, one);
  const auto negative = I::lt(z, I::zero());
  const auto e = erf_small<I>(a);
  // |z| <= 1: 1 ± erf(|z|).
  auto one_plus = I::select(negative, I::sub(one, e), I::add(one, e));
  if (!I::all(small)) {
    // |z| > 1: 2 - erfc(|z|) for z > 0, erfc(|z|) itself for z < 0 (no cancellation).
    const auto c = erfc_large<I>(a);
    const auto large = I::select(negative, c, I::sub(I::set1(2.0f), c));
    one_plus = I::select(small, one_plus, large);
  }
  return I::mul(I::mul(I::set1(0.5f), x), one_plus);
}

// x · sigmoid(k · x) = x / (1 + e^(-k·x)).
template <class I>
inline typename I::V x_sigmoid(typename I::V x, float k) {
  const auto e = exp<I>(I::mul(I::set1(-k), x));
  return I::div(x, I::add(I::set1(1.0f), e));
}

// 0.5 · x · (1 + tanh(u)) with u = √(2/π)(x + 0.044715 x³), rewritten as x · sigmoid(2u): the
// same function without tanh's cancellation.
template <class I>
inline typename I::V gelu_tanh(typename I::V x) {
  const auto x2 = I::mul(x, x);
  const auto u = I::mul(I::mul(I::set1(0.7978845608028654f), x),
                        I::fmadd(I::set1(0.044715f), x2, I::set1(1.0f)));
  const auto e = exp<I>(I::mul(I::set1(-2.0f), u));
  return I::div(x, I::add(I::set1(1.0f), e));
}

// act(x) lane by lane, the activation fixed at compile time so loops carry no switch.
template <Activation kAct, class I>
inline typename I::V activate(typename I::V x) {
  if constexpr (kAct == Activation::kIdentity) {
    return x;
  } else if constexpr (kAct == Activation::kGeluErf) {
    return gelu_erf<I>(x);
  } else if constexpr (kAct == Activation::kGeluTanh) {
    return gelu_tanh<I>(x);
  } else if constexpr (kAct == Activation::kQuickGelu) {
    return x_sigmoid<I>(x, 1.702f);
  } else if constexpr (kAct == Activation::kSilu) {
    return x_sigmoid<I>(x, 1.0f);
  } else if constexpr (kAct == Activation::kRelu) {
    return I::max(I::zero(), x);  // NaN survives (second operand)
  } else {
    // tanh: only poolers use it (one row per sequence); libm keeps its relative accuracy.
    alignas(64) float lanes[sizeof(typename I::V) / sizeof(float)];
    std::memcpy(lanes, &x, sizeof x);
    for (float& v : lanes) v = std::tanh(v);
    std::memcpy(&x, lanes, sizeof x);
    return x;
  }
}

}  // namespace detail

#if defined(__AVX512F__)
inline __m512 exp(__m512 x) { return detail::exp<detail::Avx512>(x); }
inline __m512 erf(__m512 x) { return detail::erf<detail::Avx512>(x); }
inline __m512 gelu_erf(__m512 x) { return detail::gelu_erf<detail::Avx512>(x); }
inline __m512 x_sigmoid(__m512 x, float k) { return detail::x_sigmoid<detail::Avx512>(x, k); }
inline __m512 gelu_tanh(__m512 x) { return detail::gelu_tanh<detail::Avx512>(x); }
template <Activation kAct>
inline __m512 activate(__m512 x) {
  return detail::activate<kAct, detail::Avx512>(x);
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

#endif  // __AVX512F__

// The same functions 8 lanes at a time where the build has AVX2 and FMA (x86-64-v3, the
// container image) but not AVX-512.
#if defined(__AVX2__) && defined(__FMA__)
inline __m256 exp(__m256 x) { return detail::exp<detail::Avx2>(x); }
inline __m256 erf(__m256 x) { return detail::erf<detail::Avx2>(x); }
inline __m256 gelu_erf(__m256 x) { return detail::gelu_erf<detail::Avx2>(x); }
inline __m256 x_sigmoid(__m256 x, float k) { return detail::x_sigmoid<detail::Avx2>(x, k); }
inline __m256 gelu_tanh(__m256 x) { return detail::gelu_tanh<detail::Avx2>(x); }
template <Activation kAct>
inline __m256 activate(__m256 x) {
  return detail::activate<kAct, detail::Avx2>(x);
}

// The first min(n, 8) lanes (none for n <= 0), for _mm256_maskload_ps / _mm256_maskstore_ps on
// a tail or a column block at any offset.
inline __m256i tail_lanes(long n) {
  return _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(n)),
                            _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}

// Horizontal sum and max: halves, then pairs, then the last two lanes.
inline float reduce_add(__m256 v) {
  __m128 s = _mm_add_ps(_mm256_extractf128_ps(v, 1), _mm256_castps256_ps128(v));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  return _mm_cvtss_f32(_mm_add_ss(s, _mm_movehdup_ps(s)));
}
inline float reduce_max(__m256 v) {
  __m128 m = _mm_max_ps(_mm256_extractf128_ps(v, 1), _mm256_castps256_ps128(v));
  m = _mm_max_ps(m, _mm_movehl_ps(m, m));
  return _mm_cvtss_f32(_mm_max_ss(m, _mm_movehdup_ps(m)));
}
#endif

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
