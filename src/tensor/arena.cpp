#include "tensor/arena.h"

#include <algorithm>
#include <cstdlib>
#include <new>

namespace onepass::tensor {
namespace {

constexpr std::size_t kAlignBytes = 64;
constexpr std::size_t kAlignFloats = kAlignBytes / sizeof(float);
constexpr std::size_t kMinBlockFloats = 1 << 16;

std::size_t round_up(std::size_t n) { return (n + kAlignFloats - 1) / kAlignFloats * kAlignFloats; }

void free_floats(float* p) { std::free(p); }

}  // namespace

void ScratchArena::add_block(std::size_t min_floats) {
  const std::size_t size = round_up(std::max(min_floats, kMinBlockFloats));
  void* p = std::aligned_alloc(kAlignBytes, size * sizeof(float));
  if (p == nullptr) throw std::bad_alloc();
  Block block;
  block.data = std::unique_ptr<float[], void (*)(float*)>(static_cast<float*>(p), free_floats);
  block.size = size;
  blocks_.push_back(std::move(block));
}

float* ScratchArena::alloc(std::size_t count) {
  const std::size_t need = round_up(count == 0 ? 1 : count);
  if (blocks_.empty() || blocks_.back().size - blocks_.back().used < need) {
    // Grow geometrically so a growing workload settles after a few calls.
    add_block(std::max(need, capacity_floats()));
  }
  Block& block = blocks_.back();
  float* out = block.data.get() + block.used;
  block.used += need;
  in_use_floats_ += need;
  if (in_use_floats_ > peak_floats_) peak_floats_ = in_use_floats_;
  return out;
}

void ScratchArena::reset() {
  if (blocks_.size() > 1) {
    blocks_.clear();
    add_block(peak_floats_);
  }
  if (!blocks_.empty()) blocks_.back().used = 0;
  in_use_floats_ = 0;
}

std::size_t ScratchArena::capacity_floats() const {
  std::size_t n = 0;
  for (const auto& b : blocks_) n += b.size;
  return n;
}

ArenaPool::Lease::~Lease() {
  arena_->reset();
  std::lock_guard<std::mutex> lock(pool_.mutex_);
  pool_.free_.push_back(std::move(arena_));
}

ArenaPool::Lease ArenaPool::acquire() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!free_.empty()) {
      auto arena = std::move(free_.back());
      free_.pop_back();
      return Lease(*this, std::move(arena));
    }
  }
  return Lease(*this, std::make_unique<ScratchArena>());
}

}  // namespace onepass::tensor
