// kernels/packed_gemm.h (the fp32 Linear of AVX2 CPUs) on its own, on any machine with AVX2:
// against the naive Linear on shapes that take every path (one row, a partial row tile, many
// chunks; a ragged last panel; each activation, with and without the residual), and
// bit-identical whatever the team size or the rows sharing the call.
#include "kernels/packed_gemm.h"

#include <gtest/gtest.h>
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "kernels/reference/reference.h"
#include "random_values.h"

namespace onepass::kernels {
namespace {

struct Shape {
  std::int64_t rows, in, out;
};

std::vector<float> run(const Shape& s, const float* x, const std::vector<float>& panels,
                       const float* bias, Activation act, bool accumulate, int threads) {
  std::vector<float> y = random_vector(static_cast<std::size_t>(s.rows * s.out), 7);
  const int before = omp_get_max_threads();
  omp_set_num_threads(threads);
  packed_linear(x, s.rows, s.in, panels.data(), s.in, s.out, bias, act, accumulate, y.data());
  omp_set_num_threads(before);
  return y;
}

TEST(PackedGemm, MatchesTheNaiveLinearOnEveryPath) {
  if (!has_packed_gemm()) GTEST_SKIP() << "built without AVX2 + FMA";
  // 1 row; 31 rows (5 tiles and a 1-row tile); 200 x 320 x 72 (several row chunks; out not a
  // multiple of 16, so the last panel is ragged).
  for (const Shape s : {Shape{1, 768, 40}, Shape{31, 768, 96}, Shape{200, 320, 72}}) {
    const auto w = random_vector(static_cast<std::size_t>(s.out * s.in), 1, 0.05f);
    const auto b = random_vector(static_cast<std::size_t>(s.out), 2);
    const auto x = random_vector(static_cast<std::size_t>(s.rows * s.in), 3);
    const auto panels = pack_panels(w.data(), s.out, s.in);
    for (const Activation act : {Activation::kIdentity, Activation::kGeluErf, Activation::kGeluTanh,
                                 Activation::kSilu, Activation::kRelu, Activation::kTanh}) {
      for (const bool accumulate : {false, true}) {
        const auto got = run(s, x.data(), panels, b.data(), act, accumulate, 2);
        auto expected = random_vector(static_cast<std::size_t>(s.rows * s.out), 7);
        reference::linear(x.data(), s.rows, s.in, w.data(), b.data(), s.out, act, accumulate,
                          expected.data());
        float worst = 0.0f;
        for (std::size_t i = 0; i < got.size(); ++i)
          worst = std::max(worst, std::abs(got[i] - expected[i]));
        EXPECT_LE(worst, 2e-5f) << s.rows << "x" << s.in << "x" << s.out << " "
                                << activation_name(act);
      }
    }
  }
}

TEST(PackedGemm, BitIdenticalWhateverTheTeamOrTheRowsAlongside) {
  if (!has_packed_gemm()) GTEST_SKIP() << "built without AVX2 + FMA";
  const Shape all{200, 320, 72};
  const auto w = random_vector(static_cast<std::size_t>(all.out * all.in), 4, 0.05f);
  const auto b = random_vector(static_cast<std::size_t>(all.out), 5);
  const auto x = random_vector(static_cast<std::size_t>(all.rows * all.in), 6);
  const auto panels = pack_panels(w.data(), all.out, all.in);
  const auto one = run(all, x.data(), panels, b.data(), Activation::kGeluErf, true, 1);
  for (const int threads : {2, 3}) {
    const auto many = run(all, x.data(), panels, b.data(), Activation::kGeluErf, true, threads);
    for (std::size_t i = 0; i < one.size(); ++i)
      ASSERT_EQ(one[i], many[i]) << threads << " threads, element " << i;
  }
  // A few rows alone, from anywhere in the call, against the same rows of the 200.
  for (const std::int64_t first : {0, 77, 199}) {
    const std::int64_t rows = std::min<std::int64_t>(7, all.rows - first);
    auto y = random_vector(static_cast<std::size_t>(all.rows * all.out), 7);
    packed_linear(x.data() + first * all.in, rows, all.in, panels.data(), all.in, all.out, b.data(),
                  Activation::kGeluErf, true, y.data() + first * all.out);
    for (std::int64_t i = first * all.out; i < (first + rows) * all.out; ++i) {
      const auto at = static_cast<std::size_t>(i);
      ASSERT_EQ(y[at], one[at]) << "row " << i / all.out;
    }
  }
}

}  // namespace
}  // namespace onepass::kernels
