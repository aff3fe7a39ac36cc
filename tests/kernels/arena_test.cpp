// The scratch arena: alignment, growth, and no growth once the peak is known.
#include "tensor/arena.h"

#include <gtest/gtest.h>

#include <cstdint>

namespace onepass::tensor {
namespace {

TEST(ScratchArena, AlignedSlicesAndSettlesIntoOneBlock) {
  ScratchArena arena;
  float* a = arena.alloc(3);
  float* b = arena.alloc(100000);  // forces a second block
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(a) % 64, 0u);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(b) % 64, 0u);
  b[99999] = 1.0f;
  arena.reset();
  const auto capacity = arena.capacity_floats();
  EXPECT_GE(capacity, 100000u + 16u);
  arena.alloc(3);
  arena.alloc(100000);
  arena.reset();
  EXPECT_EQ(arena.capacity_floats(), capacity);  // second pass of the same size: no new block
}

TEST(ArenaPool, ReusesReleasedArenas) {
  ArenaPool pool;
  ScratchArena* first = nullptr;
  {
    auto lease = pool.acquire();
    first = &*lease;
    lease->alloc(10);
  }
  auto again = pool.acquire();
  EXPECT_EQ(&*again, first);
}

}  // namespace
}  // namespace onepass::tensor
