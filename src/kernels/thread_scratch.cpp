#include "kernels/thread_scratch.h"

#include <array>
#include <cstddef>
#include <vector>

namespace onepass::kernels {
namespace {

// This thread's buffer of element type T for `use` (each use reads one type; the others stay
// empty), grown to at least count values.
template <class T>
T* grow(ScratchUse use, std::int64_t count) {
  thread_local std::array<std::vector<T>, static_cast<std::size_t>(ScratchUse::kCount)> buffers;
  auto& buffer = buffers[static_cast<std::size_t>(use)];
  if (buffer.size() < static_cast<std::size_t>(count))
    buffer.resize(static_cast<std::size_t>(count));
  return buffer.data();
}

}  // namespace

float* thread_scratch_floats(ScratchUse use, std::int64_t count) { return grow<float>(use, count); }

std::uint32_t* thread_scratch_words(ScratchUse use, std::int64_t count) {
  return grow<std::uint32_t>(use, count);
}

}  // namespace onepass::kernels
