// kernels/stream_gemm.h on its own: against the naive Linear on shapes that take every path (one
// row, one chunk of tiles, several chunks; a ragged last panel; each activation, with and without
// the residual), and bit-identical whatever the team size or the rows sharing the call.
#include "kernels/stream_gemm.h"

#include <gtest/gtest.h>

#include "linear_kernel_checks.h"

namespace onepass::kernels {
namespace {

using linear_checks::LinearShape;

const auto kStreamPack = [](const float* w, std::int64_t out, std::int64_t in) {
  return pack_stream_panels(w, out, in);
};
const auto kStreamRun = [](const float* x, std::int64_t rows, std::int64_t ldx,
                           const HugePageBuffer& panels, std::int64_t in, std::int64_t out,
                           const float* bias, Activation act, bool accumulate, float* y) {
  stream_linear(x, rows, ldx, static_cast<const float*>(panels.data()), in, out, bias, act,
                accumulate, y);
};

TEST(StreamGemm, MatchesTheNaiveLinearOnEveryPath) {
  if (!has_stream_gemm()) GTEST_SKIP() << "this build or CPU has no AVX-512";
  // 1 row; 31 rows (3 tiles, one chunk); 1000 x 320 (1.3 MB of rows: 3 chunks of tiles), out not
  // a multiple of 32.
  linear_checks::expect_matches_naive_linear(
      kStreamPack, kStreamRun,
      {LinearShape{1, 768, 40}, LinearShape{31, 768, 96}, LinearShape{1000, 320, 72}},
      {Activation::kIdentity, Activation::kGeluErf, Activation::kTanh});
}

TEST(StreamGemm, BitIdenticalWhateverTheTeamOrTheRowsAlongside) {
  if (!has_stream_gemm()) GTEST_SKIP() << "this build or CPU has no AVX-512";
  // 17 rows alone from the first, second and third chunk of the 1000.
  linear_checks::expect_bit_identical_whatever_the_split(
      kStreamPack, kStreamRun, LinearShape{1000, 320, 72}, 17, {0, 377, 999});
}

}  // namespace
}  // namespace onepass::kernels
