// The load-time check that every stored float is finite (a NaN or Inf weight would poison every
// answer silently). Every load scans every float of its files, so it is written for speed.
#pragma once

#include <cstddef>

namespace onepass::weights {

// A tensor with more floats than this is scanned in two halves at once (64 MB: only a
// multilingual embedding table is this large; mDeBERTa's is 768 MB, a third of a load's scan).
inline constexpr std::size_t kSplitScanAbove = std::size_t{16} << 20;

// Index of the first NaN/Inf in data[0, n), or n.
std::size_t first_non_finite(const float* data, std::size_t n,
                             std::size_t split_above = kSplitScanAbove);

}  // namespace onepass::weights
