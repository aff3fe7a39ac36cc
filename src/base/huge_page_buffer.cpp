#include "base/huge_page_buffer.h"

#include <sys/mman.h>

#include <cstdint>
#include <new>
#include <utility>

namespace onepass {
namespace {

constexpr std::size_t kHugePage = std::size_t{2} << 20;
constexpr std::size_t kPage = std::size_t{4} << 10;

std::size_t round_up(std::size_t n, std::size_t to) { return (n + to - 1) / to * to; }

}  // namespace

HugePageBuffer::HugePageBuffer(std::size_t bytes) : size_(bytes) {
  if (bytes == 0) return;
  mapped_ = round_up(bytes, kPage);
  // mmap only promises 4 KiB alignment: map one huge page more and give back the ends, so that
  // every whole 2 MiB of the buffer can be one huge page.
  const std::size_t reserved = mapped_ + kHugePage;
  void* p = ::mmap(nullptr, reserved, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) throw std::bad_alloc();
  const auto start = reinterpret_cast<std::uintptr_t>(p);
  const std::uintptr_t aligned = round_up(start, kHugePage);
  if (aligned > start) ::munmap(p, aligned - start);
  const std::uintptr_t end = aligned + mapped_;
  if (start + reserved > end) ::munmap(reinterpret_cast<void*>(end), start + reserved - end);
  data_ = reinterpret_cast<void*>(aligned);
  // Best effort: EINVAL without transparent huge page support leaves ordinary pages.
  ::madvise(data_, mapped_, MADV_HUGEPAGE);
}

HugePageBuffer::~HugePageBuffer() { release(); }

HugePageBuffer::HugePageBuffer(HugePageBuffer&& other) noexcept
    : data_(std::exchange(other.data_, nullptr)),
      size_(std::exchange(other.size_, 0)),
      mapped_(std::exchange(other.mapped_, 0)) {}

HugePageBuffer& HugePageBuffer::operator=(HugePageBuffer&& other) noexcept {
  if (this != &other) {
    release();
    data_ = std::exchange(other.data_, nullptr);
    size_ = std::exchange(other.size_, 0);
    mapped_ = std::exchange(other.mapped_, 0);
  }
  return *this;
}

void HugePageBuffer::release() {
  if (data_ != nullptr) ::munmap(data_, mapped_);
  data_ = nullptr;
  size_ = mapped_ = 0;
}

}  // namespace onepass
