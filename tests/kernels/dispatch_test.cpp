// kernels/dispatch.h: the public kernels run the best compilation this CPU has, and where a build
// holds two (a portable build on an AVX-512 CPU) both compute the same values on the same inputs,
// so that the AVX2 path stays tested on a machine that would otherwise only run AVX-512.
#include "kernels/dispatch.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "random_values.h"

namespace onepass::kernels {
namespace {

// The highest compilation of a file this CPU runs, as the public functions choose it.
template <class Table>
const Table* best(const Table* (*table_for)(Isa)) {
  for (const Isa isa : {Isa::kAvx512Bf16, Isa::kAvx512, Isa::kBaseline}) {
    if (const Table* table = table_for(isa)) return table;
  }
  return nullptr;
}

// |a - b| within tol · max(1, |b|) everywhere.
void expect_near_all(const std::vector<float>& a, const std::vector<float>& b, float tol,
                     const std::string& what) {
  ASSERT_EQ(a.size(), b.size()) << what;
  for (std::size_t i = 0; i < a.size(); ++i) {
    ASSERT_NEAR(a[i], b[i], tol * std::max(1.0f, std::abs(b[i]))) << what << " at " << i;
  }
}

TEST(Dispatch, PublicFunctionsRunTheBestCompilationThisCpuHas) {
  ASSERT_TRUE(cpu_supports(Isa::kBaseline));
  ASSERT_NE(elementwise_kernels(Isa::kBaseline), nullptr);
  ASSERT_NE(small_gemm_kernels(Isa::kBaseline), nullptr);
  ASSERT_NE(bf16_gemm_kernels(Isa::kBaseline), nullptr);
  ASSERT_NE(quantize_kernels(Isa::kBaseline), nullptr);
  const CodePaths paths = code_paths();
  EXPECT_EQ(paths.elementwise, best(&elementwise_kernels)->path);
  EXPECT_EQ(paths.small_gemm, best(&small_gemm_kernels)->path);
  EXPECT_EQ(paths.bf16_products, best(&bf16_gemm_kernels)->path);
  EXPECT_EQ(paths.quantize, best(&quantize_kernels)->path);
  EXPECT_EQ(has_bf16_gemm(), paths.bf16_products == "avx512_bf16");
  // A compilation for an instruction set the CPU lacks is never offered.
  for (const Isa isa : {Isa::kAvx512, Isa::kAvx512Bf16}) {
    if (!cpu_supports(isa)) {
      EXPECT_EQ(elementwise_kernels(isa), nullptr) << isa_name(isa);
      EXPECT_EQ(quantize_kernels(isa), nullptr) << isa_name(isa);
    }
  }
  // On an AVX-512 CPU every build runs the AVX-512 code: compiled for the baseline or apart.
  if (cpu_supports(Isa::kAvx512)) {
    EXPECT_EQ(paths.elementwise, "avx512");
    EXPECT_EQ(paths.small_gemm, "avx512");
  }
  if (cpu_supports(Isa::kAvx512Bf16)) {
    EXPECT_EQ(paths.bf16_products, "avx512_bf16");
  }
}

// The baseline compilation and the AVX-512 one of the same file, where this build has both and
// this CPU runs the second.
template <class Table>
bool both(const Table* (*table_for)(Isa), const Table*& low, const Table*& high) {
  low = table_for(Isa::kBaseline);
  high = table_for(Isa::kAvx512);
  return low != nullptr && high != nullptr;
}
constexpr const char* kOneCompilation =
    "one compilation here (a baseline with AVX-512, or a CPU without it)";

TEST(DispatchAgreement, SoftmaxRows) {
  const ElementwiseKernels *low = nullptr, *high = nullptr;
  if (!both(&elementwise_kernels, low, high)) GTEST_SKIP() << kOneCompilation;
  EXPECT_STRNE(low->path, high->path);
  for (const std::int64_t cols : {1, 7, 8, 9, 15, 16, 17, 33, 100, 512}) {
    const std::int64_t rows = 3;
    const auto x = random_vector(static_cast<std::size_t>(rows * cols), 11, 8.0f);
    auto a = x, b = x;
    low->softmax_rows(a.data(), rows, cols);
    high->softmax_rows(b.data(), rows, cols);
    expect_near_all(a, b, 1e-6f, "softmax_rows " + std::to_string(cols));
    // One row alone (attention's call): the same values as in the block, on either path.
    for (const auto& [table, block] : {std::pair{low, &a}, std::pair{high, &b}}) {
      auto one = x;
      table->softmax_row(one.data(), cols);
      for (std::int64_t c = 0; c < cols; ++c) ASSERT_EQ(one[c], (*block)[c]) << table->path;
    }
  }
}

TEST(DispatchAgreement, LayerNormWithAndWithoutBias) {
  const ElementwiseKernels *low = nullptr, *high = nullptr;
  if (!both(&elementwise_kernels, low, high)) GTEST_SKIP() << kOneCompilation;
  for (const std::int64_t cols : {1, 5, 16, 17, 64, 384, 768, 1000}) {
    const std::int64_t rows = 4;
    const auto x = random_vector(static_cast<std::size_t>(rows * cols), 21, 3.0f);
    const auto gamma = random_vector(static_cast<std::size_t>(cols), 22);
    const auto beta = random_vector(static_cast<std::size_t>(cols), 23);
    for (const bool with_beta : {true, false}) {
      auto a = x, b = x;
      const float* bias = with_beta ? beta.data() : nullptr;
      low->layer_norm(a.data(), rows, cols, gamma.data(), bias, 1e-7f);
      high->layer_norm(b.data(), rows, cols, gamma.data(), bias, 1e-7f);
      expect_near_all(a, b, 1e-5f, "layer_norm " + std::to_string(cols));
    }
  }
}

TEST(DispatchAgreement, EveryActivation) {
  const ElementwiseKernels *low = nullptr, *high = nullptr;
  if (!both(&elementwise_kernels, low, high)) GTEST_SKIP() << kOneCompilation;
  const auto x = random_vector(1003, 31, 6.0f);
  for (const Activation act : {Activation::kGeluErf, Activation::kGeluTanh, Activation::kQuickGelu,
                               Activation::kRelu, Activation::kSilu, Activation::kTanh}) {
    auto a = x, b = x;
    low->activate(a.data(), static_cast<std::int64_t>(a.size()), act);
    high->activate(b.data(), static_cast<std::int64_t>(b.size()), act);
    expect_near_all(a, b, 1e-6f, activation_name(act));
  }
}

TEST(DispatchAgreement, GathersAndProductsAreExact) {
  const ElementwiseKernels *low = nullptr, *high = nullptr;
  if (!both(&elementwise_kernels, low, high)) GTEST_SKIP() << kOneCompilation;
  const auto src = random_vector(300, 41);
  std::vector<std::int32_t> index(100);
  for (std::size_t c = 0; c < index.size(); ++c)
    index[c] = static_cast<std::int32_t>(7 + (c * 37) % 290);
  for (const std::int64_t count : {1, 15, 16, 17, 100}) {
    std::vector<float> a(static_cast<std::size_t>(count)), b(a.size());
    low->gather_row(src.data(), index.data(), 5, count, a.data());
    high->gather_row(src.data(), index.data(), 5, count, b.data());
    EXPECT_EQ(a, b) << count;
  }
  const auto y = random_vector(src.size(), 42);
  auto a = src, b = src;
  low->multiply(a.data(), y.data(), static_cast<std::int64_t>(a.size()));
  high->multiply(b.data(), y.data(), static_cast<std::int64_t>(b.size()));
  EXPECT_EQ(a, b);
}

TEST(DispatchAgreement, SmallGemmBothLayouts) {
  const SmallGemmKernels *low = nullptr, *high = nullptr;
  if (!both(&small_gemm_kernels, low, high)) GTEST_SKIP() << kOneCompilation;
  EXPECT_STRNE(low->path, high->path);
  for (const bool trans_b : {false, true}) {
    for (const std::int64_t m : {1, 6, 7, 13}) {
      for (const std::int64_t n : {1, 15, 16, 17, 33, 130}) {
        for (const std::int64_t k : {1, 7, 64}) {
          const std::int64_t lda = k + 3, ldb = (trans_b ? k : n) + 5, ldc = n + 2;
          const auto a = random_vector(static_cast<std::size_t>(m * lda), 51);
          const auto b = random_vector(static_cast<std::size_t>((trans_b ? n : k) * ldb), 52);
          std::vector<float> c_low(static_cast<std::size_t>(m * ldc), 42.0f), c_high = c_low;
          ASSERT_TRUE(low->small_gemm(trans_b, m, n, k, 0.125f, a.data(), lda, b.data(), ldb,
                                      c_low.data(), ldc));
          ASSERT_TRUE(high->small_gemm(trans_b, m, n, k, 0.125f, a.data(), lda, b.data(), ldb,
                                       c_high.data(), ldc));
          expect_near_all(c_low, c_high, 1e-6f,
                          std::to_string(trans_b) + " " + std::to_string(m) + "x" +
                              std::to_string(n) + "x" + std::to_string(k));
        }
      }
    }
  }
}

TEST(DispatchAgreement, QuantizeAndTheInt8Epilogue) {
  const QuantizeKernels *low = nullptr, *high = nullptr;
  if (!both(&quantize_kernels, low, high)) GTEST_SKIP() << kOneCompilation;
  const std::int64_t rows = 5, cols = 70;
  const auto x = random_vector(static_cast<std::size_t>(rows * cols), 61, 4.0f);

  // Weights: the same rounding on both paths, so the same bytes.
  std::vector<std::int8_t> qw_low(x.size()), qw_high(x.size());
  std::vector<float> sw_low(rows), sw_high(rows);
  std::vector<std::int32_t> sums_low(rows), sums_high(rows);
  low->quantize_weights_s8(x.data(), rows, cols, 1.0f, qw_low.data(), sw_low.data(),
                           sums_low.data());
  high->quantize_weights_s8(x.data(), rows, cols, 1.0f, qw_high.data(), sw_high.data(),
                            sums_high.data());
  EXPECT_EQ(qw_low, qw_high);
  EXPECT_EQ(sw_low, sw_high);
  EXPECT_EQ(sums_low, sums_high);

  // Activations: AVX-512 adds the zero point inside one fused multiply-add, the scalar path after
  // rounding, so a value may land one step apart.
  std::vector<std::uint8_t> qa_low(x.size()), qa_high(x.size());
  std::vector<float> sa_low(rows), sa_high(rows);
  std::vector<std::int32_t> za_low(rows), za_high(rows);
  low->quantize_rows_u8(x.data(), rows, cols, cols, qa_low.data(), sa_low.data(), za_low.data());
  high->quantize_rows_u8(x.data(), rows, cols, cols, qa_high.data(), sa_high.data(),
                         za_high.data());
  EXPECT_EQ(sa_low, sa_high);
  EXPECT_EQ(za_low, za_high);
  for (std::size_t i = 0; i < qa_low.size(); ++i)
    ASSERT_LE(std::abs(int{qa_low[i]} - int{qa_high[i]}), 1) << i;

  // The epilogue on the same accumulators.
  std::vector<std::int32_t> acc(x.size());
  for (std::size_t i = 0; i < acc.size(); ++i) acc[i] = static_cast<std::int32_t>(x[i] * 5000.0f);
  const auto bias = random_vector(static_cast<std::size_t>(cols), 62);
  const auto col_scales = random_vector(static_cast<std::size_t>(cols), 63, 1e-3f);
  std::vector<std::int32_t> col_sums(static_cast<std::size_t>(cols));
  for (std::size_t c = 0; c < col_sums.size(); ++c) col_sums[c] = static_cast<std::int32_t>(c) - 30;
  for (const Activation act : {Activation::kIdentity, Activation::kGeluErf}) {
    for (const bool accumulate : {false, true}) {
      auto y_low = x, y_high = x;
      low->dequantize_rows(acc.data(), rows, cols, sa_low.data(), za_low.data(), col_scales.data(),
                           col_sums.data(), bias.data(), act, y_low.data(), accumulate);
      high->dequantize_rows(acc.data(), rows, cols, sa_low.data(), za_low.data(), col_scales.data(),
                            col_sums.data(), bias.data(), act, y_high.data(), accumulate);
      expect_near_all(y_low, y_high, 1e-6f, activation_name(act));
    }
  }
}

TEST(DispatchAgreement, Bf16ConversionIsExact) {
  const QuantizeKernels* low = quantize_kernels(Isa::kBaseline);
  const QuantizeKernels* high = quantize_kernels(Isa::kAvx512Bf16);
  if (high == nullptr) GTEST_SKIP() << "no AVX512-BF16 compilation apart from the baseline here";
  const std::int64_t rows = 3, cols = 37, ldx = 40;
  const auto x = random_vector(static_cast<std::size_t>(rows * ldx), 71, 100.0f);
  std::vector<std::uint16_t> a(static_cast<std::size_t>(rows * cols)), b(a.size());
  low->convert_rows_to_bf16(x.data(), rows, cols, ldx, a.data());
  high->convert_rows_to_bf16(x.data(), rows, cols, ldx, b.data());
  EXPECT_EQ(a, b);
}

}  // namespace
}  // namespace onepass::kernels
