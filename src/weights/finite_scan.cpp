#include "weights/finite_scan.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <thread>

namespace onepass::weights {
namespace {

// Blocks are checked with a branch-free exponent test the compiler vectorises, and only a block
// that holds a non-finite value is searched element by element.
std::size_t first_non_finite_in_order(const float* data, std::size_t n) {
  constexpr std::size_t kBlock = 4096;
  for (std::size_t begin = 0; begin < n; begin += kBlock) {
    const std::size_t end = std::min(n, begin + kBlock);
    std::uint32_t all_ones_exponent = 0;
    for (std::size_t i = begin; i < end; ++i) {
      std::uint32_t bits;
      std::memcpy(&bits, data + i, sizeof(bits));
      all_ones_exponent |= static_cast<std::uint32_t>((bits & 0x7f800000u) == 0x7f800000u);
    }
    if (all_ones_exponent == 0) continue;
    for (std::size_t i = begin; i < end; ++i) {
      if (!std::isfinite(data[i])) return i;
    }
  }
  return n;
}

}  // namespace

std::size_t first_non_finite(const float* data, std::size_t n, std::size_t split_above) {
  if (n <= split_above) return first_non_finite_in_order(data, n);
  // The scan is the first read of the tensor's pages of the mapping, and most of its time is
  // their page faults, which run on the reading thread: two threads fault twice as fast.
  const std::size_t half = n / 2;
  std::size_t in_second = n - half;
  std::thread second([&] { in_second = first_non_finite_in_order(data + half, n - half); });
  const std::size_t in_first = first_non_finite_in_order(data, half);
  second.join();
  if (in_first < half) return in_first;
  return in_second < n - half ? half + in_second : n;
}

}  // namespace onepass::weights
