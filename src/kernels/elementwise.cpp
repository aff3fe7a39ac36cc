#include "kernels/elementwise.h"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace onepass::kernels {
namespace {

// Small per-element work: only fan out to threads when there is enough of it.
constexpr std::int64_t kParallelMinElements = 1 << 14;

inline float apply(float x, Activation act) {
  switch (act) {
    case Activation::kIdentity: return x;
    case Activation::kGeluErf: return 0.5f * x * (1.0f + std::erf(x * 0.70710678118654752f));
    case Activation::kGeluTanh: {
      const float inner = 0.7978845608028654f * (x + 0.044715f * x * x * x);
      return 0.5f * x * (1.0f + std::tanh(inner));
    }
    case Activation::kQuickGelu: return x / (1.0f + std::exp(-1.702f * x));
    case Activation::kRelu: return x > 0.0f ? x : 0.0f;
    case Activation::kSilu: return x / (1.0f + std::exp(-x));
    case Activation::kTanh: return std::tanh(x);
  }
  return x;
}

}  // namespace

void layer_norm(float* x, std::int64_t rows, std::int64_t cols, const float* gamma, const float* beta,
                float eps) {
#pragma omp parallel for schedule(static) if (rows * cols >= kParallelMinElements)
  for (std::int64_t r = 0; r < rows; ++r) {
    float* row = x + r * cols;
    float sum = 0.0f;
    for (std::int64_t c = 0; c < cols; ++c) sum += row[c];
    const float mean = sum / static_cast<float>(cols);
    float sq = 0.0f;
    for (std::int64_t c = 0; c < cols; ++c) {
      const float d = row[c] - mean;
      sq += d * d;
    }
    const float inv = 1.0f / std::sqrt(sq / static_cast<float>(cols) + eps);
    for (std::int64_t c = 0; c < cols; ++c) row[c] = (row[c] - mean) * inv * gamma[c] + beta[c];
  }
}

void activate(float* x, std::int64_t n, Activation act) {
  if (act == Activation::kIdentity) return;
#pragma omp parallel for schedule(static) if (n >= kParallelMinElements)
  for (std::int64_t i = 0; i < n; ++i) x[i] = apply(x[i], act);
}

void softmax_rows(float* x, std::int64_t rows, std::int64_t cols) {
#pragma omp parallel for schedule(static) if (rows * cols >= kParallelMinElements)
  for (std::int64_t r = 0; r < rows; ++r) {
    float* row = x + r * cols;
    float max = row[0];
    for (std::int64_t c = 1; c < cols; ++c) max = std::max(max, row[c]);
    float sum = 0.0f;
    for (std::int64_t c = 0; c < cols; ++c) {
      row[c] = std::exp(row[c] - max);
      sum += row[c];
    }
    const float inv = 1.0f / sum;
    for (std::int64_t c = 0; c < cols; ++c) row[c] *= inv;
  }
}

void embedding_gather(const float* table, std::int64_t dim, const std::int32_t* ids, std::int64_t n,
                      float* out, bool accumulate) {
#pragma omp parallel for schedule(static) if (n * dim >= kParallelMinElements)
  for (std::int64_t i = 0; i < n; ++i) {
    const float* src = table + static_cast<std::int64_t>(ids[i]) * dim;
    float* dst = out + i * dim;
    if (accumulate) {
      for (std::int64_t c = 0; c < dim; ++c) dst[c] += src[c];
    } else {
      std::memcpy(dst, src, static_cast<std::size_t>(dim) * sizeof(float));
    }
  }
}

}  // namespace onepass::kernels
