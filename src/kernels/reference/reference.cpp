#include "kernels/reference/reference.h"

#include <algorithm>
#include <cmath>
#include <vector>

namespace onepass::kernels::reference {

float activation(float xf, Activation act) {
  const double x = xf;
  switch (act) {
    case Activation::kIdentity:
      return xf;
    case Activation::kGeluErf:
      return static_cast<float>(0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0))));
    case Activation::kGeluTanh:
      return static_cast<float>(
          0.5 * x * (1.0 + std::tanh(std::sqrt(2.0 / M_PI) * (x + 0.044715 * x * x * x))));
    case Activation::kQuickGelu:
      return static_cast<float>(x / (1.0 + std::exp(-1.702 * x)));
    case Activation::kRelu:
      return xf > 0.0f ? xf : 0.0f;
    case Activation::kSilu:
      return static_cast<float>(x / (1.0 + std::exp(-x)));
    case Activation::kTanh:
      return static_cast<float>(std::tanh(x));
  }
  return xf;
}

void linear(const float* x, std::int64_t rows, std::int64_t in, const float* weight,
            const float* bias, std::int64_t out, Activation act, bool accumulate, float* y) {
  for (std::int64_t r = 0; r < rows; ++r) {
    for (std::int64_t o = 0; o < out; ++o) {
      double acc = bias ? bias[o] : 0.0;
      for (std::int64_t i = 0; i < in; ++i)
        acc += static_cast<double>(x[r * in + i]) * weight[o * in + i];
      const float v = activation(static_cast<float>(acc), act);
      y[r * out + o] = accumulate ? y[r * out + o] + v : v;
    }
  }
}

void layer_norm(float* x, std::int64_t rows, std::int64_t cols, const float* gamma,
                const float* beta, float eps) {
  for (std::int64_t r = 0; r < rows; ++r) {
    float* row = x + r * cols;
    double mean = 0.0;
    for (std::int64_t c = 0; c < cols; ++c) mean += row[c];
    mean /= static_cast<double>(cols);
    double var = 0.0;
    for (std::int64_t c = 0; c < cols; ++c) var += (row[c] - mean) * (row[c] - mean);
    var /= static_cast<double>(cols);
    const double inv = 1.0 / std::sqrt(var + eps);
    for (std::int64_t c = 0; c < cols; ++c)
      row[c] =
          static_cast<float>((row[c] - mean) * inv * gamma[c] + (beta != nullptr ? beta[c] : 0.0f));
  }
}

void softmax_rows(float* x, std::int64_t rows, std::int64_t cols) {
  for (std::int64_t r = 0; r < rows; ++r) {
    float* row = x + r * cols;
    double max = row[0];
    for (std::int64_t c = 1; c < cols; ++c) max = std::max<double>(max, row[c]);
    double sum = 0.0;
    for (std::int64_t c = 0; c < cols; ++c) sum += std::exp(row[c] - max);
    for (std::int64_t c = 0; c < cols; ++c)
      row[c] = static_cast<float>(std::exp(row[c] - max) / sum);
  }
}

void multiply(float* x, const float* y, std::int64_t n) {
  for (std::int64_t i = 0; i < n; ++i) x[i] *= y[i];
}

void embedding_gather(const float* table, std::int64_t dim, const std::int32_t* ids, std::int64_t n,
                      float* out, bool accumulate) {
  for (std::int64_t i = 0; i < n; ++i) {
    for (std::int64_t c = 0; c < dim; ++c) {
      const float v = table[static_cast<std::int64_t>(ids[i]) * dim + c];
      out[i * dim + c] = accumulate ? out[i * dim + c] + v : v;
    }
  }
}

void self_attention(const float* q, const float* k, const float* v, std::int64_t ld,
                    std::int64_t heads, std::int64_t head_dim, const std::size_t* offsets,
                    std::size_t num_seqs, float scale, float* ctx,
                    const std::function<float(std::int64_t, std::int64_t, std::int64_t)>& bias) {
  const std::int64_t hidden = heads * head_dim;
  for (std::size_t s = 0; s < num_seqs; ++s) {
    const auto begin = static_cast<std::int64_t>(offsets[s]);
    const auto len = static_cast<std::int64_t>(offsets[s + 1]) - begin;
    std::vector<double> p(static_cast<std::size_t>(len));
    for (std::int64_t h = 0; h < heads; ++h) {
      for (std::int64_t i = 0; i < len; ++i) {
        double max = -1e300;
        for (std::int64_t j = 0; j < len; ++j) {
          double dot = 0.0;
          for (std::int64_t c = 0; c < head_dim; ++c) {
            dot += static_cast<double>(q[(begin + i) * ld + h * head_dim + c]) *
                   k[(begin + j) * ld + h * head_dim + c];
          }
          p[j] = dot * scale + (bias ? bias(h, i, j) : 0.0);
          max = std::max(max, p[j]);
        }
        double sum = 0.0;
        for (std::int64_t j = 0; j < len; ++j) sum += (p[j] = std::exp(p[j] - max));
        for (std::int64_t c = 0; c < head_dim; ++c) {
          double acc = 0.0;
          for (std::int64_t j = 0; j < len; ++j)
            acc += p[j] / sum * v[(begin + j) * ld + h * head_dim + c];
          ctx[(begin + i) * hidden + h * head_dim + c] = static_cast<float>(acc);
        }
      }
    }
  }
}

}  // namespace onepass::kernels::reference
