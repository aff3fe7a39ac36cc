// kernels::gemm's attention path (kernels/small_gemm.h) against a double-precision product over
// ragged shapes, strides and both B layouts; rows must not depend on how many come with them.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <vector>

#include "kernels/matmul.h"
#include "random_values.h"

namespace onepass::kernels {
namespace {

TEST(SmallGemm, RaggedShapesStridesAndBothLayoutsAgainstDouble) {
  for (const bool trans_b : {false, true}) {
    for (const std::int64_t m : {1, 5, 6, 7, 13, 65}) {
      for (const std::int64_t n : {1, 15, 16, 17, 32, 33, 65, 130}) {
        for (const std::int64_t k : {1, 7, 64}) {
          const std::int64_t lda = k + 3, ldb = (trans_b ? k : n) + 5, ldc = n + 2;
          const auto a = random_vector(static_cast<std::size_t>(m * lda), 1);
          const auto b = random_vector(static_cast<std::size_t>((trans_b ? n : k) * ldb), 2);
          std::vector<float> c(static_cast<std::size_t>(m * ldc), 42.0f);
          gemm(false, trans_b, m, n, k, 0.125f, a.data(), lda, b.data(), ldb, 0.0f, c.data(), ldc);
          for (std::int64_t i = 0; i < m; ++i) {
            for (std::int64_t j = 0; j < ldc; ++j) {
              if (j >= n) {  // the stride's padding is never written
                ASSERT_EQ(c[i * ldc + j], 42.0f);
                continue;
              }
              double want = 0.0;
              for (std::int64_t p = 0; p < k; ++p)
                want += static_cast<double>(a[i * lda + p]) *
                        (trans_b ? b[j * ldb + p] : b[p * ldb + j]);
              ASSERT_NEAR(c[i * ldc + j], 0.125 * want, 1e-5)
                  << trans_b << " " << m << "x" << n << "x" << k;
            }
          }
        }
      }
    }
  }
}

TEST(SmallGemm, ARowAloneEqualsTheSameRowInABlock) {
  const std::int64_t m = 13, n = 47, k = 64;
  const auto a = random_vector(m * k, 3), b = random_vector(n * k, 4);
  std::vector<float> all(m * n);
  gemm(false, true, m, n, k, 1.0f, a.data(), k, b.data(), k, 0.0f, all.data(), n);
  for (std::int64_t i = 0; i < m; ++i) {
    std::vector<float> one(n);
    gemm(false, true, 1, n, k, 1.0f, a.data() + i * k, k, b.data(), k, 0.0f, one.data(), n);
    for (std::int64_t j = 0; j < n; ++j) ASSERT_EQ(one[j], all[i * n + j]) << i << "," << j;
  }
}

}  // namespace
}  // namespace onepass::kernels
