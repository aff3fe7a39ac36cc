// Row-wise and element-wise kernels on token-major activations. Rows are independent (no state
// shared across rows), so results for one sequence never depend on the rest of the batch. Each
// parallelises over rows with OpenMP; each has a naive twin in reference/ that tests compare to.
// Compiled once per instruction set and chosen at run time (dispatch.h).
#pragma once

#include <cstdint>

#include "kernels/activation.h"

namespace onepass::kernels {

// x[rows, cols] normalised in place per row: (x - mean) / sqrt(var + eps) * gamma + beta, with
// the biased variance (torch.nn.LayerNorm). beta null: no bias (LayerNorm(bias=False)).
void layer_norm(float* x, std::int64_t rows, std::int64_t cols, const float* gamma,
                const float* beta, float eps);

// x[n] = act(x[n]) in place.
void activate(float* x, std::int64_t n, Activation act);

// x[n] *= y[n] in place: a gated MLP's act(input) · gate (ModernBERT's GeGLU, NomicBERT's SwiGLU).
void multiply(float* x, const float* y, std::int64_t n);

// Each row of x[rows, cols] replaced by its softmax (max-subtracted, float accumulation).
void softmax_rows(float* x, std::int64_t rows, std::int64_t cols);

// One row, on the calling thread: for loops already inside a parallel region (attention runs
// one per query row). softmax_rows(x, 1, n) there would open a one-thread OpenMP team per row,
// which cost more than the row itself.
void softmax_row(float* x, std::int64_t cols);

// out[i, :] (+)= table[ids[i], :] for i < n; table is [num_rows, dim]. ids must be checked to be
// in range by the caller (the model validates user ids before any compute).
void embedding_gather(const float* table, std::int64_t dim, const std::int32_t* ids, std::int64_t n,
                      float* out, bool accumulate);

// dst[c] = src[index[c] - offset] for c < count, on the calling thread: a row read through an
// index table (DeBERTa's relative positions). Every index[c] - offset must be in src's range.
void gather_row(const float* src, const std::int32_t* index, std::int32_t offset,
                std::int64_t count, float* dst);

}  // namespace onepass::kernels
