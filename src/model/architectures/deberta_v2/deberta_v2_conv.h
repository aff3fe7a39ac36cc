// DeBERTa-v2's optional ConvLayer (conv_kernel_size > 0): after layer 0,
//   out = LayerNorm(layer0_output + act(Conv1d(embedding_output)))
// with zero padding (k - 1) / 2 at each sequence's own edges (HF's padded positions hold the
// masked, zeroed embedding output, so per-sequence zero padding is exact). Implemented as one
// product over the packed batch: an im2col matrix [tokens, k * hidden] times the conv weight
// rearranged (with zeros for other groups) into [hidden, k * hidden].
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "kernels/activation.h"
#include "kernels/matmul.h"

namespace onepass::model::deberta_v2 {

class ConvLayer {
 public:
  ConvLayer() = default;
  // weight: nn.Conv1d [hidden, hidden / groups, kernel]; bias: [hidden]. kernel must be odd.
  ConvLayer(const float* weight, const float* bias, int hidden, int kernel, int groups,
            kernels::Activation act, const float* ln_gamma, const float* ln_beta, float eps);
  ConvLayer(ConvLayer&&) noexcept = default;
  ConvLayer& operator=(ConvLayer&&) noexcept = default;

  bool enabled() const { return kernel_ > 0; }
  // Floats of scratch apply() needs for `tokens` packed tokens.
  std::size_t scratch_floats(std::size_t tokens) const;
  // x: layer 0 output [tokens, hidden], updated in place; embedding_output: [tokens, hidden];
  // offsets[0..num_seqs] delimit the sequences.
  void apply(const float* embedding_output, float* x, const std::size_t* offsets,
             std::size_t num_seqs, float* scratch) const;

 private:
  int hidden_ = 0;
  int kernel_ = 0;
  std::vector<float> weight_;  // [hidden, kernel * hidden], tap-major columns
  kernels::Linear linear_;
  const float* ln_gamma_ = nullptr;
  const float* ln_beta_ = nullptr;
  float eps_ = 0.0f;
};

}  // namespace onepass::model::deberta_v2
