// fp32 Linear product for AVX-512 CPUs (in place of oneDNN 2.6's brgemm there), chosen at run
// time, so that the portable container image runs it too.
//
// A short request is bound by streaming the weights from memory: mDeBERTa-base reads 340 MiB of
// fp32 matrices per forward pass and uses each weight for only ~30 rows. Here each panel of 32
// output channels is read from memory once per call, and while the row tiles work on one panel
// from L2, the next panel is prefetched into L2 at an even rate, so the memory stream runs beside
// the arithmetic instead of stalling it (oneDNN leaves that to the hardware prefetcher, which does
// not run far enough ahead). The rows are first copied k-major per tile, so that the inner loop
// broadcasts from one pointer at fixed offsets: 28 FMAs for 16 loads, no address arithmetic.
// All 72 matrices of a 12-layer, 768-wide encoder one after the other (kernels_bench
// BM_StreamedWeights), this VM's Xeon: at 31 rows 1 thread 40-43 ms against oneDNN's 50-51 ms,
// 2 threads 21-23 against 25-27 ms; at 128 and 512 rows level or ahead; at 2048 rows 7-8%
// behind (oneDNN's blocking suits big compute-bound products better; one kernel must serve every
// row count, see below).
//
// Every output element is one accumulator summed over k in index order (one FMA per k), then
// + bias, the activation, + the residual: a row's bits never depend on the row count, its
// position in the call or the thread split (batch invariance).
#pragma once

#include <cstdint>

#include "base/huge_page_buffer.h"
#include "kernels/activation.h"

namespace onepass::kernels {

// Whether this build has the kernel and this CPU the instructions it needs (the x86-64-v4 set:
// AVX-512 F, BW, DQ, VL, CD; within ONEDNN_MAX_CPU_ISA, dispatch.h's cpu_supports). A portable
// build (x86-64-v3) has it too: its AVX-512 part is compiled on its own (stream_gemm_avx512.h) and
// runs only where this says true. Without it stream_linear must not run.
bool has_stream_gemm();

// Panels of W[out, in] (PyTorch layout), on huge pages: ceil(out / 32) panels, panel p holding
// for each k the 32 weights w[32 p + j, k] contiguously (zero past out_features).
HugePageBuffer pack_stream_panels(const float* w, std::int64_t out, std::int64_t in);

// y[rows, out] (+)= act(x[rows, in] · Wᵀ + bias), x with row stride ldx, y contiguous; bias may
// be null; with accumulate the activation comes before the add (nn.Linear, then the residual).
// Runs on the calling thread's OpenMP team; keeps a per-thread copy of the rows that grows to the
// largest call.
void stream_linear(const float* x, std::int64_t rows, std::int64_t ldx, const float* panels,
                   std::int64_t in, std::int64_t out, const float* bias, Activation act,
                   bool accumulate, float* y);

}  // namespace onepass::kernels
