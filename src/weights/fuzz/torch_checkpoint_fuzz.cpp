// libFuzzer: the PyTorch checkpoint reader (zip directory, restricted unpickler, storage and
// stride checks) must either return tensors whose every element lies inside the file, or throw
// onepass::Error; never crash, read out of bounds, loop without end or throw anything else.
// Entries are stored, and no CRC is checked, so mutations of the pickle inside a seed reach the
// unpickler.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <span>

#include "base/error.h"
#include "weights/torch_checkpoint.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  try {
    const auto tensors = onepass::weights::read_torch_checkpoint(std::span(data, size), "fuzz");
    for (const auto& t : tensors) {
      if (t.shape.size() != t.stride.size()) std::abort();
      if (t.numel() == 0) continue;
      std::uint64_t last = 0;
      for (std::size_t k = 0; k < t.shape.size(); ++k) {
        last +=
            static_cast<std::uint64_t>(t.shape[k] - 1) * static_cast<std::uint64_t>(t.stride[k]);
      }
      const std::uint64_t elem = onepass::weights::stored_dtype_bytes(t.dtype);
      const std::uint64_t end = t.data_offset + (last + 1) * elem;
      if (end > size) std::abort();                 // the reader's promise
      volatile std::uint8_t touch = data[end - 1];  // ASan sees a wrong promise too
      (void)touch;
    }
  } catch (const onepass::Error&) {
  }
  return 0;
}
