#include "model/architectures/deberta_v2/deberta_v2_conv.h"

#include <algorithm>
#include <cstring>

#include "base/error.h"
#include "kernels/elementwise.h"

namespace onepass::model::deberta_v2 {

ConvLayer::ConvLayer(const float* weight, const float* bias, int hidden, int kernel, int groups,
                     kernels::Activation act, const float* ln_gamma, const float* ln_beta,
                     float eps)
    : hidden_(hidden), kernel_(kernel), ln_gamma_(ln_gamma), ln_beta_(ln_beta), eps_(eps) {
  ONEPASS_CHECK(kernel % 2 == 1 && groups >= 1 && hidden % groups == 0, "conv shape");
  const int in_per_group = hidden / groups;
  const int out_per_group = hidden / groups;
  const auto k_total = static_cast<std::size_t>(kernel) * hidden;
  weight_.assign(static_cast<std::size_t>(hidden) * k_total, 0.0f);
  for (int o = 0; o < hidden; ++o) {
    const int group = o / out_per_group;
    for (int c = 0; c < in_per_group; ++c) {
      for (int tap = 0; tap < kernel; ++tap) {
        const float w = weight[(static_cast<std::size_t>(o) * in_per_group + c) * kernel + tap];
        weight_[o * k_total + static_cast<std::size_t>(tap) * hidden + group * in_per_group + c] =
            w;
      }
    }
  }
  linear_ = kernels::Linear(weight_.data(), bias, hidden, static_cast<std::int64_t>(k_total), act);
}

std::size_t ConvLayer::scratch_floats(std::size_t tokens) const {
  return tokens * static_cast<std::size_t>(kernel_) * hidden_;
}

void ConvLayer::apply(const float* embedding_output, float* x, const std::size_t* offsets,
                      std::size_t num_seqs, float* scratch) const {
  const int pad = (kernel_ - 1) / 2;
  const auto h = static_cast<std::size_t>(hidden_);
  const std::size_t row = static_cast<std::size_t>(kernel_) * h;
  for (std::size_t s = 0; s < num_seqs; ++s) {
    const auto begin = static_cast<std::ptrdiff_t>(offsets[s]);
    const auto end = static_cast<std::ptrdiff_t>(offsets[s + 1]);
    for (std::ptrdiff_t i = begin; i < end; ++i) {
      float* dst = scratch + static_cast<std::size_t>(i) * row;
      for (int tap = 0; tap < kernel_; ++tap) {
        const std::ptrdiff_t src = i + tap - pad;
        float* block = dst + static_cast<std::size_t>(tap) * h;
        if (src < begin || src >= end) {
          std::fill(block, block + h, 0.0f);
        } else {
          std::memcpy(block, embedding_output + static_cast<std::size_t>(src) * h,
                      h * sizeof(float));
        }
      }
    }
  }
  const auto tokens = static_cast<std::int64_t>(offsets[num_seqs]);
  // x += act(conv(embedding_output)); then LayerNorm. HF's final "* input_mask" is all ones.
  linear_.forward(scratch, tokens, x, /*accumulate=*/true);
  kernels::layer_norm(x, tokens, hidden_, ln_gamma_, ln_beta_, eps_);
}

}  // namespace onepass::model::deberta_v2
