// How close two vectors are, as the golden tests measure onepass's outputs against transformers'
// and against each other: the cosine of embeddings, the largest absolute difference of logits.
#pragma once

#include <span>

namespace onepass::testing {

// The cosine of the angle between `a` and `b` (of one size), summed in double.
double cosine(std::span<const float> a, std::span<const float> b);
double cosine(std::span<const double> a, std::span<const double> b);

// The largest |a[i] - b[i]|. Vectors of different sizes fail the running test (EXPECT) and are
// compared over the shorter one.
float max_abs_diff(std::span<const float> a, std::span<const float> b);
double max_abs_diff(std::span<const double> a, std::span<const double> b);

}  // namespace onepass::testing
