// kernels/vec_math.h against double-precision libm over dense sweeps, the extremes and the
// special values; its horizontal reductions against the intrinsics' lane tree, bit for bit; and
// the row kernels built on it (softmax, activate, the int8 epilogue) against double-precision
// formulas.
#include "kernels/vec_math.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "kernels/elementwise.h"
#include "kernels/quantize.h"

#if defined(__AVX512F__)
// GCC 12's AVX-512 headers start some intrinsics from a deliberately undefined register.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

namespace onepass::kernels {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

#if defined(__AVX512F__) || (defined(__AVX2__) && defined(__FMA__))
// Each instruction set the build has vec_math.h's vector functions for: its width, its loads
// and stores. The sweeps below run for each.
#if defined(__AVX512F__)
struct Avx512Lanes {
  static constexpr std::size_t kWidth = 16;
  static __m512 load(const float* p) { return _mm512_loadu_ps(p); }
  static void store(float* p, __m512 v) { _mm512_storeu_ps(p, v); }
};
#endif
#if defined(__AVX2__) && defined(__FMA__)
struct Avx2Lanes {
  static constexpr std::size_t kWidth = 8;
  static __m256 load(const float* p) { return _mm256_loadu_ps(p); }
  static void store(float* p, __m256 v) { _mm256_storeu_ps(p, v); }
};
#endif

// Every float step over [lo, hi] in `steps` equal steps, plus both ends.
std::vector<float> sweep(double lo, double hi, int steps) {
  std::vector<float> xs;
  for (int i = 0; i <= steps; ++i) xs.push_back(static_cast<float>(lo + (hi - lo) * i / steps));
  return xs;
}

// ±10^e for e in [lo_exp, hi_exp], 50 values a decade.
std::vector<float> log_sweep(int lo_exp, int hi_exp) {
  std::vector<float> xs;
  for (int i = lo_exp * 50; i <= hi_exp * 50; ++i) {
    const auto v = static_cast<float>(std::pow(10.0, i / 50.0));
    xs.push_back(v);
    xs.push_back(-v);
  }
  return xs;
}

// fn applied to xs L::kWidth lanes at a time (the last vector padded with the first value).
template <class L, class VecFn>
std::vector<float> lanewise(const VecFn& fn, const std::vector<float>& xs) {
  std::vector<float> out(xs.size());
  for (std::size_t i = 0; i < xs.size(); i += L::kWidth) {
    float lanes[L::kWidth];
    for (std::size_t l = 0; l < L::kWidth; ++l) lanes[l] = i + l < xs.size() ? xs[i + l] : xs[0];
    L::store(lanes, fn(L::load(lanes)));
    for (std::size_t l = 0; l < L::kWidth && i + l < xs.size(); ++l) out[i + l] = lanes[l];
  }
  return out;
}

template <class L, class VecFn>
float one(const VecFn& fn, float x) {
  return lanewise<L>(fn, std::vector<float>{x})[0];
}

// Largest |got - want| / max(|want|, floor) over xs.
template <class L, class VecFn>
double worst_error(const VecFn& fn, const std::vector<float>& xs,
                   const std::function<double(double)>& want, double floor) {
  const auto got = lanewise<L>(fn, xs);
  double worst = 0.0;
  float worst_x = 0.0f;
  for (std::size_t i = 0; i < xs.size(); ++i) {
    const double w = want(xs[i]);
    const double err = std::abs(got[i] - w) / std::max(std::abs(w), floor);
    EXPECT_TRUE(std::isfinite(err)) << "x = " << xs[i] << " got " << got[i] << " want " << w;
    if (err > worst) {
      worst = err;
      worst_x = xs[i];
    }
  }
  std::printf("worst at x = %.9g: %.3g\n", worst_x, worst);
  return worst;
}

const auto kExp = [](auto x) { return vec::exp(x); };
const auto kErf = [](auto x) { return vec::erf(x); };
const auto kGeluErf = [](auto x) { return vec::gelu_erf(x); };
const auto kGeluTanh = [](auto x) { return vec::gelu_tanh(x); };
const auto kSilu = [](auto x) { return vec::x_sigmoid(x, 1.0f); };

template <class L>
class VecMath : public ::testing::Test {};
#if defined(__AVX512F__)
using Isas = ::testing::Types<Avx512Lanes, Avx2Lanes>;
#else
using Isas = ::testing::Types<Avx2Lanes>;
#endif
TYPED_TEST_SUITE(VecMath, Isas);

double gelu_erf_exact(double x) {
  // 1 + erf(z) = erfc(-z): no cancellation in the reference either.
  return 0.5 * x * std::erfc(-x / std::sqrt(2.0));
}

TYPED_TEST(VecMath, ExpRelativeErrorOverTheNormalRange) {
  // exp(-87.3) is just above FLT_MIN; exp(88.72) just below FLT_MAX.
  auto xs = sweep(-87.3, 88.72, 400000);
  for (float x : log_sweep(-30, 1)) xs.push_back(x);
  const double err = worst_error<TypeParam>(
      kExp, xs, [](double x) { return std::exp(x); }, 0.0);
  EXPECT_LT(err, 3e-7) << "max relative error";
}

TYPED_TEST(VecMath, ExpExtremesAndSpecialValues) {
  EXPECT_EQ(one<TypeParam>(kExp, 0.0f), 1.0f);
  EXPECT_EQ(one<TypeParam>(kExp, -0.0f), 1.0f);
  for (float x : {88.73f, 89.0f, 100.0f, 1e10f, 3e38f, kInf})
    EXPECT_EQ(one<TypeParam>(kExp, x), kInf) << x;
  for (float x : {-104.0f, -110.0f, -1e10f, -3e38f, -kInf})
    EXPECT_EQ(one<TypeParam>(kExp, x), 0.0f) << x;
  // Subnormal results: within one subnormal step-ish of the truth, never negative or NaN.
  for (float x : sweep(-103.9, -87.4, 2000)) {
    const float got = one<TypeParam>(kExp, x);
    EXPECT_GE(got, 0.0f);
    EXPECT_NEAR(got, std::exp(static_cast<double>(x)),
                2e-7 * std::exp(static_cast<double>(x)) + 2e-45)
        << x;
  }
  EXPECT_TRUE(std::isnan(one<TypeParam>(kExp, kNaN)));
}

TYPED_TEST(VecMath, ErfRelativeErrorEverywhere) {
  auto xs = sweep(-6.0, 6.0, 600000);
  for (float x : log_sweep(-37, 1)) xs.push_back(x);
  const double err = worst_error<TypeParam>(
      kErf, xs, [](double x) { return std::erf(x); }, 1e-38);
  EXPECT_LT(err, 5e-7) << "max relative error";
  // Against the float libm too: within a couple of its ulps.
  const auto got = lanewise<TypeParam>(kErf, xs);
  for (std::size_t i = 0; i < xs.size(); ++i)
    ASSERT_NEAR(got[i], std::erf(xs[i]), 3e-7f * std::abs(std::erf(xs[i])) + 1e-38f);
}

TYPED_TEST(VecMath, ErfExtremesAndSpecialValues) {
  for (float x : {4.0f, 10.0f, 1e10f, kInf}) {
    EXPECT_EQ(one<TypeParam>(kErf, x), 1.0f) << x;
    EXPECT_EQ(one<TypeParam>(kErf, -x), -1.0f) << x;
  }
  EXPECT_EQ(one<TypeParam>(kErf, 0.0f), 0.0f);
  EXPECT_TRUE(std::signbit(one<TypeParam>(kErf, -0.0f)));
  EXPECT_TRUE(std::isnan(one<TypeParam>(kErf, kNaN)));
  EXPECT_FLOAT_EQ(one<TypeParam>(kErf, 1e-30f), static_cast<float>(1e-30 * 2.0 / std::sqrt(M_PI)));
}

// In the negative tails the GELUs are e^(-c·x²)-small and their condition number grows like x²
// (one float rounding of x moves them by x²·6e-8 relative), so relative error is asserted
// where it is meaningful (x >= -2.5) and absolute error everywhere.
TYPED_TEST(VecMath, GeluErfAgainstErfcForm) {
  auto xs = sweep(-2.5, 14.0, 400000);
  for (float x : log_sweep(-30, 3)) {
    if (x >= -2.5f) xs.push_back(x);
  }
  EXPECT_LT(worst_error<TypeParam>(kGeluErf, xs, gelu_erf_exact, 1e-30), 1e-6) << "relative";
  const auto wide = sweep(-30.0, 30.0, 400000);
  const auto got = lanewise<TypeParam>(kGeluErf, wide);
  for (std::size_t i = 0; i < wide.size(); ++i)
    ASSERT_NEAR(got[i], gelu_erf_exact(wide[i]), 3e-7 * std::max(1.0f, std::abs(wide[i])))
        << wide[i];
  // The tail keeps its sign and magnitude (1 + erf would cancel to 0 here): gelu(-8) ≈ -2.5e-15.
  EXPECT_NEAR(one<TypeParam>(kGeluErf, -8.0f) / gelu_erf_exact(-8.0), 1.0, 1e-5);
  EXPECT_EQ(one<TypeParam>(kGeluErf, 1e30f), 1e30f);
  EXPECT_EQ(one<TypeParam>(kGeluErf, kInf), kInf);
  EXPECT_TRUE(std::isnan(one<TypeParam>(kGeluErf, kNaN)));
  EXPECT_EQ(one<TypeParam>(kGeluErf, -1e30f), 0.0f);
}

TYPED_TEST(VecMath, SigmoidFormsAgainstDouble) {
  const auto gelu_tanh = [](double x) {
    return 0.5 * x * (1.0 + std::tanh(std::sqrt(2.0 / M_PI) * (x + 0.044715 * x * x * x)));
  };
  const auto silu = [](double x) { return x / (1.0 + std::exp(-x)); };
  EXPECT_LT(worst_error<TypeParam>(kGeluTanh, sweep(-2.5, 30.0, 200000), gelu_tanh, 1e-30), 1e-6)
      << "relative";
  EXPECT_LT(worst_error<TypeParam>(kSilu, sweep(-10.0, 30.0, 200000), silu, 1e-30), 1e-6)
      << "relative";
  const auto wide = sweep(-60.0, 60.0, 200000);
  const auto got_tanh = lanewise<TypeParam>(kGeluTanh, wide),
             got_silu = lanewise<TypeParam>(kSilu, wide);
  for (std::size_t i = 0; i < wide.size(); ++i) {
    ASSERT_NEAR(got_tanh[i], gelu_tanh(wide[i]), 3e-7 * std::max(1.0f, std::abs(wide[i])))
        << wide[i];
    ASSERT_NEAR(got_silu[i], silu(wide[i]), 3e-7 * std::max(1.0f, std::abs(wide[i]))) << wide[i];
  }
  EXPECT_EQ(one<TypeParam>(kSilu, 1e30f), 1e30f);
  EXPECT_TRUE(std::isnan(one<TypeParam>(kSilu, kNaN)));
  EXPECT_TRUE(std::isnan(one<TypeParam>(kGeluTanh, kNaN)));
}

#endif  // AVX-512 or AVX2 + FMA

#if defined(__AVX512F__)
// The lane tree of GCC's _mm512_reduce_{add,max}_ps, written out in scalars: upper half with
// lower half, then upper quarter with lower quarter, then lanes {0,1} with {2,3}, then 0 with 1.
// `op(a, b)` keeps the operand order, which matters for max with NaN or ±0.
template <class Op>
float tree_reduce(const float* v, Op op) {
  float s8[8], s4[4];
  for (int i = 0; i < 8; ++i) s8[i] = op(v[i + 8], v[i]);
  for (int i = 0; i < 4; ++i) s4[i] = op(s8[i + 4], s8[i]);
  const float s0 = op(s4[0], s4[2]), s1 = op(s4[1], s4[3]);
  return op(s0, s1);
}

// maxps: the first operand when it is greater, else the second (so NaN and equal zeros give
// the second).
float maxps(float a, float b) { return a > b ? a : b; }

std::uint32_t bits(float x) {
  std::uint32_t u;
  std::memcpy(&u, &x, sizeof u);
  return u;
}

TEST(VecMathReductions, FollowTheIntrinsicsLaneOrderBitForBit) {
  const float specials[] = {0.0f, -0.0f, kNaN, -kInf, kInf, 1e-45f, 3e38f, -3e38f};
  std::uint32_t state = 12345;
  const auto next = [&state] { return state = state * 1664525u + 1013904223u; };
  for (int t = 0; t < 200000; ++t) {
    alignas(64) float v[16];
    for (float& x : v) {
      const std::uint32_t r = next();
      x = r % 8 == 0 ? specials[(r >> 8) % 8]
                     : static_cast<float>(static_cast<int>(r >> 8) % 20001 - 10000) / 77.0f;
    }
    const __m512 x = _mm512_load_ps(v);
    ASSERT_EQ(bits(vec::reduce_max(x)), bits(tree_reduce(v, maxps))) << "trial " << t;
    ASSERT_EQ(bits(vec::reduce_add(x)), bits(tree_reduce(v, std::plus<float>()))) << "trial " << t;
  }
  // Without NaN the max is the largest lane wherever it sits, and a sum of small integers is exact.
  for (int at = 0; at < 16; ++at) {
    alignas(64) float v[16];
    for (int i = 0; i < 16; ++i) v[i] = static_cast<float>(i - 20);
    v[at] = 5.0f;
    EXPECT_EQ(vec::reduce_max(_mm512_load_ps(v)), 5.0f) << at;
    EXPECT_EQ(vec::reduce_add(_mm512_load_ps(v)), 5.0f + (-20.0f * 16 + 120.0f) - (at - 20.0f))
        << at;
  }
}
#endif  // __AVX512F__

// The public row kernels, in any build: against double-precision formulas.
TEST(VecMathKernels, SoftmaxRowsAgainstDoubleForEveryTailLength) {
  for (std::int64_t cols = 1; cols <= 70; ++cols) {
    std::vector<float> x(static_cast<std::size_t>(3 * cols));
    for (std::size_t i = 0; i < x.size(); ++i)
      x[i] = static_cast<float>(std::sin(0.7 * i) * 12.0 - (i % 5));
    const auto in = x;
    softmax_rows(x.data(), 3, cols);
    for (std::int64_t r = 0; r < 3; ++r) {
      double max = -1e300, sum = 0.0;
      for (std::int64_t c = 0; c < cols; ++c)
        max = std::max(max, static_cast<double>(in[r * cols + c]));
      for (std::int64_t c = 0; c < cols; ++c) sum += std::exp(in[r * cols + c] - max);
      for (std::int64_t c = 0; c < cols; ++c) {
        const double want = std::exp(in[r * cols + c] - max) / sum;
        ASSERT_NEAR(x[r * cols + c], want, 1e-6 * want + 1e-12) << "cols " << cols;
      }
    }
  }
}

TEST(VecMathKernels, ActivateGeluEveryTailLength) {
  for (std::int64_t n = 1; n <= 40; ++n) {
    std::vector<float> x(static_cast<std::size_t>(n));
    for (std::int64_t i = 0; i < n; ++i) x[i] = -6.0f + 0.37f * static_cast<float>(i);
    const auto in = x;
    activate(x.data(), n, Activation::kGeluErf);
    for (std::int64_t i = 0; i < n; ++i)
      ASSERT_NEAR(x[i], 0.5 * in[i] * std::erfc(-in[i] / std::sqrt(2.0)),
                  1e-6 * std::max(1.0f, std::abs(in[i])));
  }
}

TEST(VecMathKernels, Int8EpilogueFusesScalesBiasActivationAndResidual) {
  const std::int64_t rows = 3, cols = 37;  // two full vectors and a 5-lane tail
  std::vector<std::int32_t> acc(rows * cols), col_sums(cols), zps{0, 7, 255};
  std::vector<float> col_scales(cols), bias(cols), row_scales{0.01f, 0.02f, 0.005f};
  for (std::int64_t c = 0; c < cols; ++c) {
    col_sums[c] = static_cast<std::int32_t>(c * 13 % 200) - 100;
    col_scales[c] = 0.001f * static_cast<float>(1 + c % 9);
    bias[c] = 0.05f * static_cast<float>(c % 7) - 0.15f;
    for (std::int64_t r = 0; r < rows; ++r)
      acc[r * cols + c] = static_cast<std::int32_t>((r * 977 + c * 131) % 9000) - 4000;
  }
  for (const bool accumulate : {false, true}) {
    std::vector<float> y(rows * cols, 0.25f);
    dequantize_rows(acc.data(), rows, cols, row_scales.data(), zps.data(), col_scales.data(),
                    col_sums.data(), bias.data(), Activation::kGeluErf, y.data(), accumulate);
    for (std::int64_t r = 0; r < rows; ++r) {
      for (std::int64_t c = 0; c < cols; ++c) {
        const double v = static_cast<double>(acc[r * cols + c] - zps[r] * col_sums[c]) *
                             row_scales[r] * col_scales[c] +
                         bias[c];
        const double want = (accumulate ? 0.25 : 0.0) + 0.5 * v * std::erfc(-v / std::sqrt(2.0));
        ASSERT_NEAR(y[r * cols + c], want, 1e-6 * std::max(1.0, std::abs(want))) << r << "," << c;
      }
    }
  }
}

}  // namespace
}  // namespace onepass::kernels
