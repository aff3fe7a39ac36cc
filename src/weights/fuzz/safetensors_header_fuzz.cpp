// libFuzzer: the safetensors header parser must either accept a file whose every tensor lies
// inside it, or throw onepass::Error; never crash, read out of bounds or throw anything else.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <span>

#include "base/error.h"
#include "weights/safetensors.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  try {
    const auto header = onepass::weights::parse_safetensors_header(std::span(data, size), "fuzz");
    const std::uint64_t data_bytes = size - header.data_offset;
    for (const auto& t : header.tensors) {
      if (t.begin > t.end || t.end > data_bytes) std::abort();  // the parser's promise
    }
  } catch (const onepass::Error&) {
  }
  return 0;
}
