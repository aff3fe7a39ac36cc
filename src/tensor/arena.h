// Scratch memory for one forward pass. A bump allocator over 64-byte aligned float blocks: alloc()
// hands out slices, reset() makes them all free again. When one pass needed more than the first
// block, reset() replaces the blocks by a single block of the peak size, so from the second call
// on a forward of the same or smaller size allocates nothing. Not thread-safe: each concurrent
// forward takes its own arena (see ArenaPool).
#pragma once

#include <cstddef>
#include <memory>
#include <mutex>
#include <type_traits>
#include <vector>

namespace onepass::tensor {

class ScratchArena {
 public:
  ScratchArena() = default;
  ScratchArena(const ScratchArena&) = delete;
  ScratchArena& operator=(const ScratchArena&) = delete;

  // `count` floats, 64-byte aligned, uninitialised; valid until reset().
  float* alloc(std::size_t count);
  // `count` objects of a trivial type T (ids, offsets), carved from the same float blocks.
  template <typename T>
  T* alloc_as(std::size_t count) {
    static_assert(alignof(T) <= 64 && std::is_trivially_destructible_v<T>);
    return reinterpret_cast<T*>(alloc((count * sizeof(T) + sizeof(float) - 1) / sizeof(float)));
  }
  void reset();
  std::size_t capacity_floats() const;

 private:
  struct Block {
    std::unique_ptr<float[], void (*)(float*)> data{nullptr, nullptr};
    std::size_t size = 0;  // floats
    std::size_t used = 0;
  };
  void add_block(std::size_t min_floats);
  std::vector<Block> blocks_;
  std::size_t peak_floats_ = 0;
  std::size_t in_use_floats_ = 0;
};

// A free list of arenas so that concurrent forward() calls each get one and later calls reuse
// them. Thread-safe.
class ArenaPool {
 public:
  class Lease {
   public:
    Lease(ArenaPool& pool, std::unique_ptr<ScratchArena> arena)
        : pool_(pool), arena_(std::move(arena)) {}
    ~Lease();
    Lease(const Lease&) = delete;
    Lease& operator=(const Lease&) = delete;
    ScratchArena& operator*() { return *arena_; }
    ScratchArena* operator->() { return arena_.get(); }

   private:
    ArenaPool& pool_;
    std::unique_ptr<ScratchArena> arena_;
  };

  Lease acquire();

 private:
  std::mutex mutex_;
  std::vector<std::unique_ptr<ScratchArena>> free_;
};

}  // namespace onepass::tensor
