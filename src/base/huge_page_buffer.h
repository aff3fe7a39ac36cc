// Anonymous memory for large read-mostly data (a model's packed weight matrices), aligned to
// 2 MiB and marked for transparent huge pages. A batch-1 forward pass streams every weight
// once; on 4 KiB pages that is one TLB miss per 4 KiB, and in a VM each miss walks two levels
// of page tables, whose entries fall out of the caches while the machine idles between
// requests. On 2 MiB pages the walks almost vanish.
//
// Where the kernel has no transparent huge pages (or they are set to "never") the buffer is
// ordinary 4 KiB memory: the hint is best effort and never an error.
#pragma once

#include <cstddef>

namespace onepass {

class HugePageBuffer {
 public:
  HugePageBuffer() = default;
  // Throws std::bad_alloc when the memory cannot be mapped, as a vector would. Zero-filled.
  explicit HugePageBuffer(std::size_t bytes);
  ~HugePageBuffer();
  HugePageBuffer(const HugePageBuffer&) = delete;
  HugePageBuffer& operator=(const HugePageBuffer&) = delete;
  HugePageBuffer(HugePageBuffer&& other) noexcept;
  HugePageBuffer& operator=(HugePageBuffer&& other) noexcept;

  void* data() const { return data_; }
  std::size_t size() const { return size_; }

 private:
  void release();

  void* data_ = nullptr;
  std::size_t size_ = 0;    // what the caller asked for
  std::size_t mapped_ = 0;  // what stays mapped from data_ (whole 4 KiB pages)
};

}  // namespace onepass
