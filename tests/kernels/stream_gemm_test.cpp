// kernels/stream_gemm.h on its own: against the naive Linear on shapes that take every path (one
// row, one chunk of tiles, several chunks; a ragged last panel; each activation, with and without
// the residual), and bit-identical whatever the team size or the rows sharing the call.
#include "kernels/stream_gemm.h"

#include <gtest/gtest.h>
#include <omp.h>

#include <cmath>
#include <vector>

#include "kernels/reference/reference.h"
#include "random_values.h"

namespace onepass::kernels {
namespace {

struct Shape {
  std::int64_t rows, in, out;
};

std::vector<float> run(const Shape& s, const float* x, const HugePageBuffer& panels,
                       const float* bias, Activation act, bool accumulate, int threads) {
  std::vector<float> y = random_vector(static_cast<std::size_t>(s.rows * s.out), 7);
  const int before = omp_get_max_threads();
  omp_set_num_threads(threads);
  stream_linear(x, s.rows, s.in, static_cast<const float*>(panels.data()), s.in, s.out, bias, act,
                accumulate, y.data());
  omp_set_num_threads(before);
  return y;
}

TEST(StreamGemm, MatchesTheNaiveLinearOnEveryPath) {
  if (!has_stream_gemm()) GTEST_SKIP() << "built without AVX-512";
  // 1 row; 31 rows (3 tiles, one chunk); 1000 x 320 (1.3 MB of rows: 3 chunks of tiles), out not a
  // multiple of 32.
  for (const Shape s : {Shape{1, 768, 40}, Shape{31, 768, 96}, Shape{1000, 320, 72}}) {
    const auto w = random_vector(static_cast<std::size_t>(s.out * s.in), 1, 0.05f);
    const auto b = random_vector(static_cast<std::size_t>(s.out), 2);
    const auto x = random_vector(static_cast<std::size_t>(s.rows * s.in), 3);
    const HugePageBuffer panels = pack_stream_panels(w.data(), s.out, s.in);
    for (const Activation act : {Activation::kIdentity, Activation::kGeluErf, Activation::kTanh}) {
      for (const bool accumulate : {false, true}) {
        const auto got = run(s, x.data(), panels, b.data(), act, accumulate, 2);
        auto expected = random_vector(static_cast<std::size_t>(s.rows * s.out), 7);
        reference::linear(x.data(), s.rows, s.in, w.data(), b.data(), s.out, act, accumulate,
                          expected.data());
        float worst = 0.0f;
        for (std::size_t i = 0; i < got.size(); ++i)
          worst = std::max(worst, std::abs(got[i] - expected[i]));
        EXPECT_LE(worst, 2e-5f) << s.rows << "x" << s.in << "x" << s.out;
      }
    }
  }
}

TEST(StreamGemm, BitIdenticalWhateverTheTeamOrTheRowsAlongside) {
  if (!has_stream_gemm()) GTEST_SKIP() << "built without AVX-512";
  const Shape all{1000, 320, 72};
  const auto w = random_vector(static_cast<std::size_t>(all.out * all.in), 4, 0.05f);
  const auto b = random_vector(static_cast<std::size_t>(all.out), 5);
  const auto x = random_vector(static_cast<std::size_t>(all.rows * all.in), 6);
  const HugePageBuffer panels = pack_stream_panels(w.data(), all.out, all.in);
  const auto one = run(all, x.data(), panels, b.data(), Activation::kGeluErf, true, 1);
  for (const int threads : {2, 3}) {
    const auto many = run(all, x.data(), panels, b.data(), Activation::kGeluErf, true, threads);
    for (std::size_t i = 0; i < one.size(); ++i)
      ASSERT_EQ(one[i], many[i]) << threads << " threads, element " << i;
  }
  // A few rows alone, from inside the second chunk, against the same rows of the 1000.
  for (const std::int64_t first : {0, 377, 999}) {
    const std::int64_t rows = std::min<std::int64_t>(17, all.rows - first);
    // The residual each row starts from is the full call's: the same seeded values.
    auto y = random_vector(static_cast<std::size_t>(all.rows * all.out), 7);
    const int before = omp_get_max_threads();
    omp_set_num_threads(2);
    stream_linear(x.data() + first * all.in, rows, all.in, static_cast<const float*>(panels.data()),
                  all.in, all.out, b.data(), Activation::kGeluErf, true,
                  y.data() + first * all.out);
    omp_set_num_threads(before);
    for (std::int64_t i = first * all.out; i < (first + rows) * all.out; ++i) {
      const auto at = static_cast<std::size_t>(i);
      ASSERT_EQ(y[at], one[at]) << "row " << i / all.out;
    }
  }
}

}  // namespace
}  // namespace onepass::kernels
