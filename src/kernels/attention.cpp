#include "kernels/attention.h"

#include <omp.h>

#include <algorithm>
#include <vector>

#include "kernels/elementwise.h"
#include "kernels/matmul.h"
#include "kernels/small_gemm_bf16.h"

namespace onepass::kernels {

std::size_t self_attention_scratch_floats(const std::size_t* offsets, std::size_t num_seqs) {
  std::size_t longest = 0;
  for (std::size_t s = 0; s < num_seqs; ++s)
    longest = std::max(longest, offsets[s + 1] - offsets[s]);
  return static_cast<std::size_t>(std::max(1, omp_get_max_threads())) * longest * longest;
}

void self_attention(const float* q, const float* k, const float* v, const AttentionShape& shape,
                    const std::size_t* offsets, std::size_t num_seqs, float scale, float* ctx,
                    float* scratch) {
  const std::int64_t heads = shape.num_heads;
  const std::int64_t d = shape.head_dim;
  const std::int64_t hidden = heads * d;
  const std::int64_t ld = shape.ld_qkv;
  std::int64_t longest = 0;
  for (std::size_t s = 0; s < num_seqs; ++s) {
    longest =
        std::max<std::int64_t>(longest, static_cast<std::int64_t>(offsets[s + 1] - offsets[s]));
  }
  const int threads = std::max(1, omp_get_max_threads());
  // One [longest, longest] score matrix per thread; the row stride is the sequence's own length.
  float* scores_all = scratch;
  const auto pairs = static_cast<std::int64_t>(num_seqs) * heads;
  const bool bf16 = shape.bf16_products;

#pragma omp parallel for schedule(dynamic, 1) num_threads(threads)
  for (std::int64_t p = 0; p < pairs; ++p) {
    const std::int64_t s = p / heads;
    const std::int64_t h = p % heads;
    const auto begin = static_cast<std::int64_t>(offsets[s]);
    const std::int64_t len = static_cast<std::int64_t>(offsets[s + 1]) - begin;
    if (len == 0) continue;
    float* scores =
        scores_all + static_cast<std::int64_t>(omp_get_thread_num()) * longest * longest;
    const float* qh = q + begin * ld + h * d;
    const float* kh = k + begin * ld + h * d;
    const float* vh = v + begin * ld + h * d;
    float* out = ctx + begin * hidden + h * d;
    if (!bf16 || !gemm_bf16(true, len, len, d, scale, qh, ld, kh, ld, scores, len))
      gemm(false, true, len, len, d, scale, qh, ld, kh, ld, 0.0f, scores, len);
    if (const float* bias = shape.distance_bias.values; bias != nullptr) {
      // Row r's keys 0..len-1 sit at offsets -r..len-1-r: one contiguous run of the table.
      const float* row_bias = bias + h * shape.distance_bias.stride + shape.distance_bias.center;
      for (std::int64_t r = 0; r < len; ++r) {
        float* row = scores + r * len;
        const float* offsets_bias = row_bias - r;
        for (std::int64_t c = 0; c < len; ++c) row[c] += offsets_bias[c];
      }
    }
    // Rows are short and many pairs run at once: stay on this thread.
    for (std::int64_t r = 0; r < len; ++r) softmax_row(scores + r * len, len);
    if (!bf16 || !gemm_bf16(false, len, d, len, 1.0f, scores, len, vh, ld, out, hidden))
      gemm(false, false, len, d, len, 1.0f, scores, len, vh, ld, 0.0f, out, hidden);
  }
}

}  // namespace onepass::kernels
