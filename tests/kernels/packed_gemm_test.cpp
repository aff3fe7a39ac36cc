// kernels/packed_gemm.h (the fp32 Linear of CPUs without AVX-512) on its own, on any machine with
// AVX2: against the naive Linear on shapes that take every path (one row, a partial row tile,
// several row chunks; a ragged last panel; each activation, with and without the residual), and
// bit-identical whatever the team size or the rows sharing the call.
#include "kernels/packed_gemm.h"

#include <gtest/gtest.h>

#include "linear_kernel_checks.h"

namespace onepass::kernels {
namespace {

using linear_checks::LinearShape;

const auto kPackedPack = [](const float* w, std::int64_t out, std::int64_t in) {
  return pack_panels(w, out, in);
};
const auto kPackedRun = [](const float* x, std::int64_t rows, std::int64_t ldx,
                           const std::vector<float>& panels, std::int64_t in, std::int64_t out,
                           const float* bias, Activation act, bool accumulate, float* y) {
  packed_linear(x, rows, ldx, panels.data(), in, out, bias, act, accumulate, y);
};

TEST(PackedGemm, MatchesTheNaiveLinearOnEveryPath) {
  if (!has_packed_gemm()) GTEST_SKIP() << "built without AVX2 + FMA";
  // 1 row; 31 rows (5 tiles and a 1-row tile); 200 x 320 x 72 (several row chunks; out not a
  // multiple of 16, so the last panel is ragged).
  linear_checks::expect_matches_naive_linear(
      kPackedPack, kPackedRun,
      {LinearShape{1, 768, 40}, LinearShape{31, 768, 96}, LinearShape{200, 320, 72}},
      {Activation::kIdentity, Activation::kGeluErf, Activation::kGeluTanh, Activation::kSilu,
       Activation::kRelu, Activation::kTanh});
}

TEST(PackedGemm, BitIdenticalWhateverTheTeamOrTheRowsAlongside) {
  if (!has_packed_gemm()) GTEST_SKIP() << "built without AVX2 + FMA";
  linear_checks::expect_bit_identical_whatever_the_split(
      kPackedPack, kPackedRun, LinearShape{200, 320, 72}, 7, {0, 77, 199});
}

}  // namespace
}  // namespace onepass::kernels
