// fp32 Linear product for CPUs where oneDNN has no brgemm (no AVX-512: oneDNN 2.6 then runs its
// jit sgemm, whose result for a row depends on how many rows share the call and on the team
// size: a 1-row call takes a gemv path, row tails other kernels, and small-M calls split k
// across threads). Here every output element is one accumulator summed over k in index order
// by the same 6 x 16 AVX2 + FMA tile, whatever the row count, tile position or thread split,
// so a row alone is bit-identical to the same row inside any batch.
//
// Weights are packed once into panels of 16 output channels: panel p holds, for each k, the
// 16 weights w[16 p + j, k] contiguously (zero past out_features). Thread-safe; runs on the
// calling thread's OpenMP team.
#pragma once

#include <cstdint>
#include <vector>

#include "kernels/activation.h"

namespace onepass::kernels {

// Whether this build has the kernel (AVX2 + FMA); without it the functions below must not run.
bool has_packed_gemm();

// Panels of W[out, in] (PyTorch layout): ceil(out / 16) · in · 16 floats.
std::vector<float> pack_panels(const float* w, std::int64_t out, std::int64_t in);

// y[rows, out] (+)= act(x[rows, in] · Wᵀ + bias), x with row stride ldx, y contiguous; bias may
// be null; with accumulate the activation comes before the add (nn.Linear, then residual).
void packed_linear(const float* x, std::int64_t rows, std::int64_t ldx, const float* panels,
                   std::int64_t in, std::int64_t out, const float* bias, Activation act,
                   bool accumulate, float* y);

// The int8 Linear's product where the CPU has no VNNI: oneDNN then multiplies u8 x s8 with
// vpmaddubsw, whose pairwise int16 sums saturate (255 · 127 · 2 > 32767). Here both operands are
// widened to int16 and multiplied with vpmaddwd (pairs summed into int32: exact), the same
// panel tiling as above. Integer sums are exact, so any row split gives the same bits.
//
// Weight panels: q[out, in] s8 as 16-channel panels of k pairs: word (pair pp, channel j) holds
// q[16 p + j, 2 pp] in its low and q[16 p + j, 2 pp + 1] in its high int16 (zero past in/out).
std::vector<std::int32_t> pack_panels_s8(const std::int8_t* q, std::int64_t out, std::int64_t in);

// acc[rows, out] = Σk xq[r, k] · q[c, k] (s32), xq contiguous u8 [rows, in]. Runs on the calling
// thread's OpenMP team; keeps a per-thread widening buffer that grows to the largest call.
void packed_gemm_u8s8(const std::uint8_t* xq, std::int64_t rows, std::int64_t in,
                      const std::int32_t* panels, std::int64_t out, std::int32_t* acc);

}  // namespace onepass::kernels
