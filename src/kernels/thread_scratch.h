// Per-thread buffers that grow to the largest request and then stay (no steady-state
// allocation), for the kernels compiled once per instruction set (dispatch.h). Those files must
// not hold a std::vector of their own: its out-of-line members, compiled there for AVX-512,
// could be the copy the linker keeps for every other caller. This file is compiled for the
// baseline only.
#pragma once

#include <cstdint>

namespace onepass::kernels {

// One buffer per use: some are in use at the same time (gemm_bf16's packed B while
// small_gemm_bf16 converts A).
enum class ScratchUse {
  kSmallGemmTransposedB,  // small_gemm: Bᵀ made row-major
  kBf16PackedB,           // gemm_bf16: B as bf16 pairs
  kBf16PairsOfA,          // small_gemm_bf16: a row block of A as bf16 pairs
  kBf16TransposedRow,     // pack_bf16_pairs_transposed: one row as pairs
  kCount
};

// At least `count` values, valid on this thread until its next call with the same use; the
// contents are not kept across a growth.
float* thread_scratch_floats(ScratchUse use, std::int64_t count);
std::uint32_t* thread_scratch_words(ScratchUse use, std::int64_t count);

}  // namespace onepass::kernels
