// The checks every fp32 Linear kernel's test runs (stream_gemm_test, packed_gemm_test). A kernel
// is two callables: pack(w, out, in) -> its packed weights, and
// run(x, rows, ldx, packed, in, out, bias, act, accumulate, y) with nn.Linear's contract
// (y[rows, out] (+)= act(x · Wᵀ + bias), the activation before the residual).
#pragma once

#include <gtest/gtest.h>
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <vector>

#include "kernels/activation.h"
#include "kernels/reference/reference.h"
#include "random_values.h"

namespace onepass::kernels::linear_checks {

struct LinearShape {
  std::int64_t rows, in, out;
};

// y for x[rows, in] · W on a team of `threads`, y starting from seeded values (the residual).
template <class Pack, class Run>
std::vector<float> run_on_team(const Run& run, const LinearShape& s, const float* x,
                               const Pack& packed, const float* bias, Activation act,
                               bool accumulate, int threads) {
  std::vector<float> y = random_vector(static_cast<std::size_t>(s.rows * s.out), 7);
  const int before = omp_get_max_threads();
  omp_set_num_threads(threads);
  run(x, s.rows, s.in, packed, s.in, s.out, bias, act, accumulate, y.data());
  omp_set_num_threads(before);
  return y;
}

// Within 2e-5 of the naive Linear on each shape, for each activation, with and without the
// residual.
template <class PackFn, class Run>
void expect_matches_naive_linear(const PackFn& pack, const Run& run,
                                 std::initializer_list<LinearShape> shapes,
                                 std::initializer_list<Activation> activations) {
  for (const LinearShape s : shapes) {
    const auto w = random_vector(static_cast<std::size_t>(s.out * s.in), 1, 0.05f);
    const auto b = random_vector(static_cast<std::size_t>(s.out), 2);
    const auto x = random_vector(static_cast<std::size_t>(s.rows * s.in), 3);
    const auto packed = pack(w.data(), s.out, s.in);
    for (const Activation act : activations) {
      for (const bool accumulate : {false, true}) {
        const auto got = run_on_team(run, s, x.data(), packed, b.data(), act, accumulate, 2);
        auto expected = random_vector(static_cast<std::size_t>(s.rows * s.out), 7);
        reference::linear(x.data(), s.rows, s.in, w.data(), b.data(), s.out, act, accumulate,
                          expected.data());
        float worst = 0.0f;
        for (std::size_t i = 0; i < got.size(); ++i)
          worst = std::max(worst, std::abs(got[i] - expected[i]));
        EXPECT_LE(worst, 2e-5f) << s.rows << "x" << s.in << "x" << s.out << " "
                                << activation_name(act) << (accumulate ? " +residual" : "");
      }
    }
  }
}

// The same bits on teams of 1, 2 and 3 threads, and for `alone` rows at each of `firsts` run by
// themselves against the same rows of the whole call (GELU and the residual on).
template <class PackFn, class Run>
void expect_bit_identical_whatever_the_split(const PackFn& pack, const Run& run,
                                             const LinearShape& all, std::int64_t alone,
                                             std::initializer_list<std::int64_t> firsts) {
  const auto w = random_vector(static_cast<std::size_t>(all.out * all.in), 4, 0.05f);
  const auto b = random_vector(static_cast<std::size_t>(all.out), 5);
  const auto x = random_vector(static_cast<std::size_t>(all.rows * all.in), 6);
  const auto packed = pack(w.data(), all.out, all.in);
  const auto one = run_on_team(run, all, x.data(), packed, b.data(), Activation::kGeluErf, true, 1);
  for (const int threads : {2, 3}) {
    const auto many =
        run_on_team(run, all, x.data(), packed, b.data(), Activation::kGeluErf, true, threads);
    for (std::size_t i = 0; i < one.size(); ++i)
      ASSERT_EQ(one[i], many[i]) << threads << " threads, element " << i;
  }
  for (const std::int64_t first : firsts) {
    const std::int64_t rows = std::min<std::int64_t>(alone, all.rows - first);
    // The residual each row starts from is the whole call's: the same seeded values.
    auto y = random_vector(static_cast<std::size_t>(all.rows * all.out), 7);
    const int before = omp_get_max_threads();
    omp_set_num_threads(2);
    run(x.data() + first * all.in, rows, all.in, packed, all.in, all.out, b.data(),
        Activation::kGeluErf, true, y.data() + first * all.out);
    omp_set_num_threads(before);
    for (std::int64_t i = first * all.out; i < (first + rows) * all.out; ++i) {
      const auto at = static_cast<std::size_t>(i);
      ASSERT_EQ(y[at], one[at]) << "row " << i / all.out;
    }
  }
}

}  // namespace onepass::kernels::linear_checks
