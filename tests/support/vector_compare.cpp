#include "tests/support/vector_compare.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

namespace onepass::testing {

namespace {

template <typename T>
double cosine_of(std::span<const T> a, std::span<const T> b) {
  double dot = 0, na = 0, nb = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    dot += static_cast<double>(a[i]) * b[i];
    na += static_cast<double>(a[i]) * a[i];
    nb += static_cast<double>(b[i]) * b[i];
  }
  return dot / std::sqrt(na * nb);
}

template <typename T>
T max_abs_diff_of(std::span<const T> a, std::span<const T> b) {
  EXPECT_EQ(a.size(), b.size());
  T worst = 0;
  for (std::size_t i = 0; i < std::min(a.size(), b.size()); ++i)
    worst = std::max(worst, std::abs(a[i] - b[i]));
  return worst;
}

}  // namespace

double cosine(std::span<const float> a, std::span<const float> b) { return cosine_of(a, b); }
double cosine(std::span<const double> a, std::span<const double> b) { return cosine_of(a, b); }

float max_abs_diff(std::span<const float> a, std::span<const float> b) {
  return max_abs_diff_of(a, b);
}
double max_abs_diff(std::span<const double> a, std::span<const double> b) {
  return max_abs_diff_of(a, b);
}

}  // namespace onepass::testing
