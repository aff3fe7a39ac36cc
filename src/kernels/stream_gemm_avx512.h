// The AVX-512 half of stream_gemm.h: a row tile's product against one panel, and its epilogue.
//
// This file's .cpp is compiled for AVX-512 whatever the build's baseline (where the compiler can
// target it), so that a portable build (the x86-64-v3 container image) still runs the kernel on
// a CPU that has it. Nothing in it may run before has_stream_gemm() has checked the CPU: only
// stream_gemm.cpp calls it, and it holds no static initializer. Its names stay in this
// namespace (and vec_math.h's per-instruction-set one), which scripts/check-isa.sh verifies.
#pragma once

#include <cstdint>

#include "kernels/activation.h"

namespace onepass::kernels::avx512 {

constexpr std::int64_t kPanel = 32;  // output channels per packed panel (two zmm)
constexpr int kMaxTileRows = 14;     // 28 accumulators + 2 weight vectors + 1 broadcast: 31 zmm
constexpr std::int64_t kLineBytes = 64;

// acc[R, 32] = a · panel for a tile of R rows (1 <= R <= kMaxTileRows), a the tile's rows
// k-major (a[k R + r]), panel as stream_gemm.h packs it. Meanwhile prefetches `lines` cache
// lines from `prefetch` into L2, spread evenly over the k loop (null: none).
using TileFn = void (*)(const float* a, const float* panel, std::int64_t in, const char* prefetch,
                        std::int64_t lines, float* acc);
// y[rows, cols] (+)= act(acc + bias) for one tile against one panel, y with row stride ldy;
// cols <= 32 (the last panel of a ragged out_features is masked); bias may be null.
using FinishFn = void (*)(const float* acc, std::int64_t rows, const float* bias, std::int64_t cols,
                          bool accumulate, float* y, std::int64_t ldy);

// Defined only where the build compiles this file for AVX-512 (src/kernels/CMakeLists.txt then
// defines ONEPASS_STREAM_GEMM_AVX512 for stream_gemm.cpp).
TileFn tile_of_rows(int rows);
FinishFn finish_of(Activation act);

}  // namespace onepass::kernels::avx512
