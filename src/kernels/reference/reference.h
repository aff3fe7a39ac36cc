// Naive kernels: the oracle the fast kernels are tested against, never on the hot path. Plain
// loops, double accumulation, no threads, no oneDNN.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>

#include "kernels/activation.h"

namespace onepass::kernels::reference {

float activation(float x, Activation act);  // in double precision, rounded once
// y[rows, out] = act(x[rows, in] · Wᵀ + b) (+ y when accumulate); W is [out, in].
void linear(const float* x, std::int64_t rows, std::int64_t in, const float* weight,
            const float* bias, std::int64_t out, Activation act, bool accumulate, float* y);
void layer_norm(float* x, std::int64_t rows, std::int64_t cols, const float* gamma,
                const float* beta, float eps);
void softmax_rows(float* x, std::int64_t rows, std::int64_t cols);
void multiply(float* x, const float* y, std::int64_t n);
void embedding_gather(const float* table, std::int64_t dim, const std::int32_t* ids, std::int64_t n,
                      float* out, bool accumulate);
// Same contract as kernels::self_attention (q, k, v row stride ld; ctx [tokens, heads * d]).
// bias(head, i, j), when given, is added to the scaled score of query i and key j.
void self_attention(
    const float* q, const float* k, const float* v, std::int64_t ld, std::int64_t heads,
    std::int64_t head_dim, const std::size_t* offsets, std::size_t num_seqs, float scale,
    float* ctx,
    const std::function<float(std::int64_t, std::int64_t, std::int64_t)>& bias = nullptr);

}  // namespace onepass::kernels::reference
