// Seeded uniform values in [-scale, scale] for the kernels tests (one generator, so a seed means
// the same inputs in every file).
#pragma once

#include <cstddef>
#include <random>
#include <vector>

namespace onepass::kernels {

inline std::vector<float> random_vector(std::size_t n, unsigned seed, float scale = 1.0f) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-scale, scale);
  std::vector<float> v(n);
  for (auto& x : v) x = dist(rng);
  return v;
}

}  // namespace onepass::kernels
