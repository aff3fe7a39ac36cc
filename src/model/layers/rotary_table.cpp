#include "model/layers/rotary_table.h"

#include <algorithm>
#include <cmath>

namespace onepass::model {

RotaryTable::RotaryTable(double theta, std::int64_t head_dim, std::int64_t max_positions,
                         double frequency_divisor)
    : half_(head_dim / 2) {
  const auto n = static_cast<std::size_t>(max_positions * half_);
  cos_.resize(n);
  sin_.resize(n);
  // Every step in float32, as torch takes it: arange(0, d, 2).float() / d, then the Python float
  // theta to that power, its reciprocal, and the float32 product with the position.
  const auto base = static_cast<float>(theta);
  std::vector<float> inv_freq(static_cast<std::size_t>(half_));
  for (std::int64_t i = 0; i < half_; ++i) {
    const float exponent = static_cast<float>(2 * i) / static_cast<float>(head_dim);
    inv_freq[static_cast<std::size_t>(i)] = 1.0f / std::pow(base, exponent);
    if (frequency_divisor != 1.0)
      inv_freq[static_cast<std::size_t>(i)] /= static_cast<float>(frequency_divisor);
  }
  for (std::int64_t p = 0; p < max_positions; ++p) {
    for (std::int64_t i = 0; i < half_; ++i) {
      const float angle = static_cast<float>(p) * inv_freq[static_cast<std::size_t>(i)];
      const auto at = static_cast<std::size_t>(p * half_ + i);
      cos_[at] = std::cos(angle);
      sin_[at] = std::sin(angle);
    }
  }
}

void RotaryTable::rotate_queries_and_keys(float* qkv, std::int64_t ld, std::int64_t heads,
                                          const std::size_t* offsets, std::size_t num_seqs) const {
  const std::int64_t head_dim = 2 * half_;
  // Query and key heads side by side: 2 · heads blocks of head_dim columns per row.
  const std::int64_t blocks = 2 * heads;
  const auto tokens = static_cast<std::int64_t>(offsets[num_seqs]);
#pragma omp parallel for schedule(static)
  for (std::int64_t t = 0; t < tokens; ++t) {
    // The token's sequence: the last one starting at or before it.
    const std::size_t* next =
        std::upper_bound(offsets, offsets + num_seqs + 1, static_cast<std::size_t>(t));
    const auto position = t - static_cast<std::int64_t>(*(next - 1));
    const float* c = cos_.data() + position * half_;
    const float* sn = sin_.data() + position * half_;
    float* row = qkv + t * ld;
    for (std::int64_t b = 0; b < blocks; ++b) {
      float* x = row + b * head_dim;
      for (std::int64_t i = 0; i < half_; ++i) {
        const float first = x[i];
        const float second = x[i + half_];
        x[i] = first * c[i] + -second * sn[i];
        x[i + half_] = second * c[i] + first * sn[i];
      }
    }
  }
}

}  // namespace onepass::model
