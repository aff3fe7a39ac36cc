// kernels/small_gemm_bf16.h against a double-precision product of the same operands rounded to
// bf16: the packing (both layouts, odd depths, column windows) must be exact and the products
// accumulate in fp32, so the only difference left is fp32 summation.
#include "kernels/small_gemm_bf16.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <vector>

#include "kernels/quantize.h"
#include "random_values.h"

namespace onepass::kernels {
namespace {

// x rounded to bf16 (nearest even) and back, through the library's own converter.
double bf16(float x) {
  std::uint16_t bits = 0;
  convert_rows_to_bf16(&x, 1, 1, 1, &bits);
  return bf16_to_float(bits);
}

TEST(SmallGemmBf16, RaggedShapesBothPackingsAgainstDouble) {
  if (!has_bf16_gemm()) GTEST_SKIP() << "built without AVX512-BF16";
  for (const bool transposed : {false, true}) {
    for (const std::int64_t m : {1, 5, 6, 7, 13}) {
      for (const std::int64_t n : {1, 15, 16, 17, 33, 65}) {
        for (const std::int64_t k : {1, 7, 64, 65}) {
          const std::int64_t lda = k + 3, ldb = (transposed ? k : n) + 5, ldc = n + 2;
          const std::int64_t ldp = n + 4;
          const auto a = random_vector(static_cast<std::size_t>(m * lda), 1);
          const auto b = random_vector(static_cast<std::size_t>((transposed ? n : k) * ldb), 2);
          std::vector<std::uint32_t> packed(static_cast<std::size_t>(bf16_pair_rows(k) * ldp));
          if (transposed)
            ASSERT_TRUE(pack_bf16_pairs_transposed(b.data(), ldb, n, k, packed.data(), ldp));
          else
            ASSERT_TRUE(pack_bf16_pairs(b.data(), ldb, k, n, packed.data(), ldp));
          std::vector<float> c(static_cast<std::size_t>(m * ldc), 42.0f);
          ASSERT_TRUE(
              small_gemm_bf16(m, n, k, 0.5f, a.data(), lda, packed.data(), ldp, c.data(), ldc));
          for (std::int64_t i = 0; i < m; ++i) {
            for (std::int64_t j = 0; j < ldc; ++j) {
              if (j >= n) {  // the stride's padding is never written
                ASSERT_EQ(c[i * ldc + j], 42.0f);
                continue;
              }
              double want = 0.0;
              for (std::int64_t p = 0; p < k; ++p)
                want += bf16(a[i * lda + p]) * bf16(transposed ? b[j * ldb + p] : b[p * ldb + j]);
              ASSERT_NEAR(c[i * ldc + j], 0.5 * want, 1e-5)
                  << transposed << " " << m << "x" << n << "x" << k;
            }
          }
        }
      }
    }
  }
}

TEST(SmallGemmBf16, ColumnWindowOfAPackedTable) {
  if (!has_bf16_gemm()) GTEST_SKIP() << "built without AVX512-BF16";
  // A [64, 300] table packed once; products against columns 37..37+70 read it in place.
  const std::int64_t k = 64, cols = 300, lo = 37, n = 70, m = 9;
  const auto table = random_vector(static_cast<std::size_t>(k * cols), 5);
  const auto a = random_vector(static_cast<std::size_t>(m * k), 6);
  std::vector<std::uint32_t> packed(static_cast<std::size_t>(bf16_pair_rows(k) * cols));
  ASSERT_TRUE(pack_bf16_pairs(table.data(), cols, k, cols, packed.data(), cols));
  std::vector<float> c(static_cast<std::size_t>(m * n));
  ASSERT_TRUE(small_gemm_bf16(m, n, k, 1.0f, a.data(), k, packed.data() + lo, cols, c.data(), n));
  for (std::int64_t i = 0; i < m; ++i) {
    for (std::int64_t j = 0; j < n; ++j) {
      double want = 0.0;
      for (std::int64_t p = 0; p < k; ++p)
        want += bf16(a[i * k + p]) * bf16(table[p * cols + lo + j]);
      ASSERT_NEAR(c[i * n + j], want, 1e-5) << i << "," << j;
    }
  }
}

TEST(SmallGemmBf16, ARowAloneEqualsTheSameRowInABlock) {
  if (!has_bf16_gemm()) GTEST_SKIP() << "built without AVX512-BF16";
  const std::int64_t m = 13, n = 47, k = 64;
  const auto a = random_vector(m * k, 3), b = random_vector(n * k, 4);
  std::vector<std::uint32_t> packed(static_cast<std::size_t>(bf16_pair_rows(k) * n));
  ASSERT_TRUE(pack_bf16_pairs_transposed(b.data(), k, n, k, packed.data(), n));
  std::vector<float> all(m * n);
  ASSERT_TRUE(small_gemm_bf16(m, n, k, 1.0f, a.data(), k, packed.data(), n, all.data(), n));
  for (std::int64_t i = 0; i < m; ++i) {
    std::vector<float> one(n);
    ASSERT_TRUE(
        small_gemm_bf16(1, n, k, 1.0f, a.data() + i * k, k, packed.data(), n, one.data(), n));
    for (std::int64_t j = 0; j < n; ++j) ASSERT_EQ(one[j], all[i * n + j]) << i << "," << j;
  }
}

}  // namespace
}  // namespace onepass::kernels
