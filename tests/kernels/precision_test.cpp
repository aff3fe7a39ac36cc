// Reduced-precision Linear (bf16, int8) and its conversions. Two kinds of check per precision:
//   exact emulation: the naive fp32 reference run on the same rounded / quantized operands the
//     kernel uses, so only summation order differs (tight tolerance): proves packing, chunking,
//     strides, scales, zero points, bias, activation and residual are wired right;
//   accuracy: against true fp32, within the error the precision itself brings.
#include <gtest/gtest.h>
#include <oneapi/dnnl/dnnl.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "base/error.h"
#include "kernels/matmul.h"
#include "kernels/packed_gemm.h"
#include "kernels/quantize.h"
#include "kernels/reference/reference.h"
#include "tests/support/vector_compare.h"

namespace onepass::kernels {
namespace {

using onepass::testing::max_abs_diff;

std::vector<float> random_values(std::size_t n, unsigned seed, float lo, float hi) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v(n);
  for (auto& x : v) x = dist(rng);
  return v;
}

float max_abs(const std::vector<float>& v) {
  float m = 0.0f;
  for (float x : v) m = std::max(m, std::abs(x));
  return m;
}

std::vector<float> round_to_bf16(const std::vector<float>& v) {
  std::vector<std::uint16_t> bits(v.size());
  convert_rows_to_bf16(v.data(), 1, static_cast<std::int64_t>(v.size()),
                       static_cast<std::int64_t>(v.size()), bits.data());
  std::vector<float> out(v.size());
  for (std::size_t i = 0; i < v.size(); ++i) out[i] = bf16_to_float(bits[i]);
  return out;
}

TEST(Quantize, Bf16RoundsToNearestEvenInVectorAndTail) {
  // 1 + 2^-8 is halfway between two bf16 values (1 and 1 + 2^-7): ties go to even (1).
  // 1 + 3·2^-8 is halfway between 1 + 2^-7 and 1 + 2^-6: even is 1 + 2^-6.
  std::vector<float> x(37, 1.0f + 1.0f / 256.0f);
  x[5] = 1.0f + 3.0f / 256.0f;
  x[36] = 1.0f + 3.0f / 256.0f;  // scalar tail
  x[7] = -2.5e-3f;
  const auto r = round_to_bf16(x);
  EXPECT_EQ(r[0], 1.0f);
  EXPECT_EQ(r[35], 1.0f);
  EXPECT_EQ(r[5], 1.0f + 4.0f / 256.0f);
  EXPECT_EQ(r[36], 1.0f + 4.0f / 256.0f);
  EXPECT_NEAR(r[7], -2.5e-3f, 2.5e-3f / 128.0f);
}

TEST(Quantize, RowsU8RoundTripWithinHalfAStep) {
  const std::int64_t rows = 5, cols = 70, ldx = 80;
  auto x = random_values(rows * ldx, 1, -0.2f, 3.0f);
  std::fill(x.begin() + 2 * ldx, x.begin() + 3 * ldx, 0.0f);  // an all-zero row
  for (std::int64_t c = 0; c < cols; ++c)
    x[4 * ldx + c] = 0.5f + 0.01f * c;  // all positive: 0 still exact
  std::vector<std::uint8_t> q(rows * cols);
  std::vector<float> scales(rows);
  std::vector<std::int32_t> zps(rows);
  quantize_rows_u8(x.data(), rows, cols, ldx, q.data(), scales.data(), zps.data());
  for (std::int64_t r = 0; r < rows; ++r) {
    for (std::int64_t c = 0; c < cols; ++c) {
      const float back = (static_cast<float>(q[r * cols + c]) - zps[r]) * scales[r];
      EXPECT_NEAR(back, x[r * ldx + c], scales[r] * 0.5f + 1e-6f) << r << "," << c;
    }
  }
  EXPECT_EQ(scales[2], 1.0f);
  EXPECT_EQ(zps[2], 0);
  EXPECT_EQ(zps[4], 0);
  EXPECT_NEAR(scales[4], (0.5f + 0.69f) / 255.0f, 1e-7f);
}

TEST(Quantize, WeightsS8PerChannel) {
  const std::int64_t out = 3, in = 20;
  auto w = random_values(out * in, 2, -0.05f, 0.05f);
  w[1 * in + 4] = -0.5f;  // channel 1's range is set by one large weight
  std::vector<std::int8_t> q(out * in);
  std::vector<float> scales(out);
  std::vector<std::int32_t> sums(out);
  quantize_weights_s8(w.data(), out, in, 1.0f, q.data(), scales.data(), sums.data());
  EXPECT_FLOAT_EQ(scales[1], 0.5f / 127.0f);
  EXPECT_EQ(q[1 * in + 4], -127);
  for (std::int64_t c = 0; c < out; ++c) {
    std::int32_t sum = 0;
    for (std::int64_t k = 0; k < in; ++k) {
      EXPECT_NEAR(q[c * in + k] * scales[c], w[c * in + k], scales[c] * 0.5f + 1e-7f);
      sum += q[c * in + k];
    }
    EXPECT_EQ(sums[c], sum);
  }
}

TEST(Quantize, WeightsS8MatchNaiveRoundingAndClampingInVectorAndTail) {
  // 37 = two 16-lane blocks and a 5-element tail; multiplier 0.5 forces clamping at ±127; halves
  // of a step (x.5 after scaling) check round-to-nearest-even on both paths.
  const std::int64_t out = 4, in = 37;
  auto w = random_values(out * in, 9, -1.0f, 1.0f);
  w[0] = 1.0f;                    // channel 0: scale 1/127 (x 0.5) ...
  w[5] = 2.5f / 127.0f * 0.5f;    // ... so this lands on 2.5 -> 2
  w[30] = 3.5f / 127.0f * 0.5f;   // (in the second block) 3.5 -> 4
  w[35] = -0.5f / 127.0f * 0.5f;  // (in the tail) -0.5 -> -0
  for (const float multiplier : {1.0f, 0.5f}) {
    std::vector<std::int8_t> q(out * in);
    std::vector<float> scales(out);
    std::vector<std::int32_t> sums(out);
    quantize_weights_s8(w.data(), out, in, multiplier, q.data(), scales.data(), sums.data());
    for (std::int64_t c = 0; c < out; ++c) {
      float amax = 0.0f;
      for (std::int64_t k = 0; k < in; ++k) amax = std::max(amax, std::fabs(w[c * in + k]));
      const float scale = amax / 127.0f * multiplier;
      EXPECT_EQ(scales[c], scale);
      std::int32_t sum = 0;
      for (std::int64_t k = 0; k < in; ++k) {
        const auto want = static_cast<std::int32_t>(
            std::clamp(std::nearbyint(w[c * in + k] * (1.0f / scale)), -127.0f, 127.0f));
        ASSERT_EQ(q[c * in + k], want)
            << "channel " << c << " k " << k << " multiplier " << multiplier;
        sum += want;
      }
      EXPECT_EQ(sums[c], sum);
    }
  }
  std::vector<std::int8_t> q(out * in);
  std::vector<float> scales(out);
  std::vector<std::int32_t> sums(out);
  quantize_weights_s8(w.data(), out, in, 0.5f, q.data(), scales.data(), sums.data());
  EXPECT_EQ(q[5], 2);
  EXPECT_EQ(q[30], 4);
  EXPECT_EQ(q[35], 0);
  EXPECT_EQ(q[0], 127);  // 1.0 / (0.5 / 127) = 254, clamped
}

// The int8 Linear's arithmetic done naively: quantize both operands with the same functions,
// dequantize them back to fp32 and run the fp32 reference on those.
std::vector<float> emulate_int8(const std::vector<float>& x, std::int64_t rows, std::int64_t in,
                                std::int64_t ldx, const std::vector<float>& w, const float* bias,
                                std::int64_t out, Activation act, bool accumulate,
                                std::vector<float> y) {
  std::vector<std::uint8_t> qx(rows * in);
  std::vector<float> sx(rows);
  std::vector<std::int32_t> zx(rows);
  quantize_rows_u8(x.data(), rows, in, ldx, qx.data(), sx.data(), zx.data());
  std::vector<std::int8_t> qw(out * in);
  std::vector<float> sw(out);
  std::vector<std::int32_t> sums(out);
  quantize_weights_s8(w.data(), out, in, 1.0f, qw.data(), sw.data(), sums.data());
  std::vector<float> dx(rows * in), dw(out * in);
  for (std::int64_t r = 0; r < rows; ++r)
    for (std::int64_t k = 0; k < in; ++k)
      dx[r * in + k] = (static_cast<float>(qx[r * in + k]) - zx[r]) * sx[r];
  for (std::int64_t c = 0; c < out; ++c)
    for (std::int64_t k = 0; k < in; ++k)
      dw[c * in + k] = static_cast<float>(qw[c * in + k]) * sw[c];
  reference::linear(dx.data(), rows, in, dw.data(), bias, out, act, accumulate, y.data());
  return y;
}

std::vector<float> contiguous(const std::vector<float>& x, std::int64_t rows, std::int64_t in,
                              std::int64_t ldx) {
  std::vector<float> out(rows * in);
  for (std::int64_t r = 0; r < rows; ++r)
    std::memcpy(&out[r * in], &x[r * ldx], in * sizeof(float));
  return out;
}

struct Case {
  Precision precision;
  Activation act;
  bool with_bias;
  std::int64_t ldx_extra;
};

class PrecisionLinearTest : public ::testing::TestWithParam<Case> {};

TEST_P(PrecisionLinearTest, MatchesEmulationAndStaysNearFp32) {
  const Case tc = GetParam();
  if (tc.precision == Precision::kBf16 && !cpu_has_bf16_matmul())
    GTEST_SKIP() << "this CPU has neither AVX512_BF16 nor AMX";
  const std::int64_t in = 96, out = 72, ldx = in + tc.ldx_extra;
  const auto w = random_values(out * in, 11, -0.08f, 0.08f);
  const auto b = random_values(out, 12, -0.05f, 0.05f);
  const float* bias = tc.with_bias ? b.data() : nullptr;
  const Linear linear(w.data(), bias, out, in, tc.act, tc.ldx_extra ? ldx : 0, tc.precision);
  EXPECT_EQ(linear.precision(), tc.precision);
  // 130 and 600 rows run as several primitives (128 + 2; 512 + 88).
  for (const std::int64_t rows : {1, 7, 59, 130, 600}) {
    const auto x = random_values(rows * ldx, 20 + static_cast<unsigned>(rows), -1.5f, 2.0f);
    const auto xc = contiguous(x, rows, in, ldx);
    for (const bool accumulate : {false, true}) {
      const auto start =
          accumulate ? random_values(rows * out, 7, -1.0f, 1.0f) : std::vector<float>(rows * out);
      auto y = start;
      linear.forward(x.data(), rows, y.data(), accumulate);

      std::vector<float> fp32 = start;
      reference::linear(xc.data(), rows, in, w.data(), bias, out, tc.act, accumulate, fp32.data());
      std::vector<float> emulated;
      float exact_tol = 0.0f, fp32_tol = 0.0f;
      if (tc.precision == Precision::kBf16) {
        const auto xr = round_to_bf16(xc), wr = round_to_bf16(w);
        emulated = start;
        reference::linear(xr.data(), rows, in, wr.data(), bias, out, tc.act, accumulate,
                          emulated.data());
        exact_tol = 2e-5f;
        fp32_tol = 2e-2f;  // 8-bit mantissas, 96 terms of |x·w| <= 0.16
      } else {
        emulated = emulate_int8(x, rows, in, ldx, w, bias, out, tc.act, accumulate, start);
        exact_tol = 5e-5f;
        fp32_tol = 3e-2f;  // half a step of 255 (activations) and 254 (weights) levels
      }
      const float scale = std::max(1.0f, max_abs(fp32));
      EXPECT_LE(max_abs_diff(y, emulated), exact_tol * scale)
          << "rows " << rows << " accumulate " << accumulate;
      EXPECT_LE(max_abs_diff(y, fp32), fp32_tol * scale)
          << "rows " << rows << " accumulate " << accumulate;
      EXPECT_GT(max_abs_diff(y, fp32), 0.0f) << "reduced precision cannot be bit-identical to fp32";
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Precisions, PrecisionLinearTest,
                         ::testing::Values(Case{Precision::kBf16, Activation::kIdentity, true, 0},
                                           Case{Precision::kBf16, Activation::kGeluErf, true, 16},
                                           Case{Precision::kBf16, Activation::kTanh, false, 0},
                                           Case{Precision::kInt8, Activation::kIdentity, true, 0},
                                           Case{Precision::kInt8, Activation::kGeluErf, true, 16},
                                           Case{Precision::kInt8, Activation::kTanh, false, 5}));

TEST(PrecisionLinear, Fp32ChunkedRowCountsMatchReference) {
  const std::int64_t in = 64, out = 48;
  const auto w = random_values(out * in, 31, -0.1f, 0.1f), b = random_values(out, 32, -0.1f, 0.1f);
  const Linear linear(w.data(), b.data(), out, in, Activation::kGeluErf);
  for (const std::int64_t rows : {128, 129, 161, 1100}) {
    const auto x = random_values(rows * in, 33, -1.0f, 1.0f);
    std::vector<float> y(rows * out), expected(rows * out);
    linear.forward(x.data(), rows, y.data());
    reference::linear(x.data(), rows, in, w.data(), b.data(), out, Activation::kGeluErf, false,
                      expected.data());
    EXPECT_LE(max_abs_diff(y, expected), 2e-5f) << rows;
  }
}

TEST(PrecisionLinear, WrongInt8ScaleIsFarFromFp32) {
  // The hook the model-level accuracy gate test uses: scales 1/16 of the right one clip most
  // weights to +-127, so the product is far off.
  const std::int64_t in = 64, out = 32, rows = 9;
  const auto w = random_values(out * in, 41, -0.1f, 0.1f);
  const auto x = random_values(rows * in, 42, -1.0f, 1.0f);
  testing::set_int8_weight_scale_multiplier(1.0f / 16.0f);
  const Linear broken(w.data(), nullptr, out, in, Activation::kIdentity, 0, Precision::kInt8);
  testing::set_int8_weight_scale_multiplier(1.0f);
  const Linear good(w.data(), nullptr, out, in, Activation::kIdentity, 0, Precision::kInt8);
  std::vector<float> yb(rows * out), yg(rows * out), expected(rows * out);
  broken.forward(x.data(), rows, yb.data());
  good.forward(x.data(), rows, yg.data());
  reference::linear(x.data(), rows, in, w.data(), nullptr, out, Activation::kIdentity, false,
                    expected.data());
  EXPECT_LT(max_abs_diff(yg, expected), 0.03f * max_abs(expected));
  EXPECT_GT(max_abs_diff(yb, expected), 0.2f * max_abs(expected));
}

}  // namespace
}  // namespace onepass::kernels

namespace onepass::kernels {
namespace {

TEST(PrecisionLinear, RowsAreBitIdenticalWhateverTheRowCountInEveryPrecision) {
  // Batch invariance rests on this: a row computed alone equals the same row inside a big call,
  // whichever primitive (row count, chunking) ran it.
  const std::int64_t in = 96, out = 192, total = 700;
  const auto w = random_values(out * in, 50, -0.1f, 0.1f), b = random_values(out, 51, -0.1f, 0.1f);
  const auto x = random_values(total * in, 52, -1.0f, 1.0f);
  for (const auto precision : {Precision::kFp32, Precision::kBf16, Precision::kInt8}) {
    if (precision == Precision::kBf16 && !cpu_has_bf16_matmul()) continue;  // see below
    for (const bool accumulate : {false, true}) {
      const Linear linear(w.data(), b.data(), out, in, Activation::kGeluErf, 0, precision);
      std::vector<float> full(total * out, 0.5f);
      linear.forward(x.data(), total, full.data(), accumulate);
      for (const std::int64_t rows : {1, 2, 3, 15, 16, 17, 40, 129, 161, 300}) {
        for (const std::int64_t first : {0, 9, 355}) {
          std::vector<float> part(rows * out, 0.5f);
          linear.forward(x.data() + first * in, rows, part.data(), accumulate);
          for (std::int64_t i = 0; i < rows * out; ++i) {
            ASSERT_EQ(part[i], full[first * out + i])
                << precision_name(precision) << " " << rows << " rows";
          }
        }
      }
    }
  }
}

TEST(PrecisionLinear, Bf16OnACpuWithoutItIsANamedUnsupportedError) {
  if (cpu_has_bf16_matmul()) GTEST_SKIP() << "this CPU has AVX512_BF16 or AMX";
  const std::vector<float> w(16 * 8, 0.1f);
  try {
    const Linear linear(w.data(), nullptr, 16, 8, Activation::kIdentity, 0, Precision::kBf16);
    FAIL() << "a bf16 Linear was built on a CPU without bf16 instructions";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kUnsupported);
    EXPECT_NE(std::string(e.what()).find("AVX512_BF16"), std::string::npos) << e.what();
  }
  EXPECT_NE(std::string(precision_unsupported_reason(Precision::kBf16)), "");
  EXPECT_EQ(std::string(precision_unsupported_reason(Precision::kInt8)), "");
  EXPECT_EQ(std::string(precision_unsupported_reason(Precision::kFp32)), "");
}

// The int8 kernel each oneDNN ISA gets: VNNI on AVX512-VNNI and on AVX-VNNI without AVX-512
// (which this test's machine need not have), the exact int16 products without VNNI. The names
// differ where the code does, since they key the saved precision verdicts.
TEST(PrecisionLinear, Int8KernelFollowsTheVnniOfTheIsa) {
  using testing::int8_linear_kernel_for;
  const std::string no_vnni = has_packed_gemm() ? "packed_gemm" : "onednn";
  EXPECT_EQ(int8_linear_kernel_for(dnnl_cpu_isa_avx2), no_vnni);
  EXPECT_EQ(int8_linear_kernel_for(dnnl_cpu_isa_avx512_core), no_vnni);  // Skylake-SP
  EXPECT_EQ(std::string(int8_linear_kernel_for(dnnl_cpu_isa_avx2_vnni)), "onednn_avx2_vnni");
  for (const auto isa :
       {dnnl_cpu_isa_avx512_core_vnni, dnnl_cpu_isa_avx512_core_bf16, dnnl_cpu_isa_avx512_core_amx})
    EXPECT_EQ(std::string(int8_linear_kernel_for(isa)), "onednn_vnni") << isa;
  EXPECT_EQ(std::string(int8_linear_kernel()),
            int8_linear_kernel_for(static_cast<unsigned>(dnnl_get_effective_cpu_isa())));
}

}  // namespace
}  // namespace onepass::kernels
