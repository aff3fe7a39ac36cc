#include "kernels/attention.h"

#include <omp.h>

#include <algorithm>
#include <limits>
#include <vector>

#include "kernels/elementwise.h"
#include "kernels/matmul.h"
#include "kernels/small_gemm_bf16.h"

namespace onepass::kernels {

namespace {

// Query rows per block of a banded (local) pass: its keys are the block's rows plus the window
// on each side.
constexpr std::int64_t kBandRows = 64;

// Query rows per block of full attention. Up to 1024 tokens a sequence is one block (the whole
// [len, len] score matrix); a longer one (ModernBERT's and BGE-M3's 8192-token inputs) is cut into
// blocks of rows over every key, so the scratch grows with the length, not its square: 32 MiB per
// thread at 8192 tokens instead of 256 MiB. Not fewer rows: P·V of a block has rows x head_dim
// outputs, and from 512 x 64 down it would leave the library GEMM (kernels::gemm) for the small
// kernel, which streams V from memory again for every 6 rows (8192 tokens, 64-row blocks: 30%
// slower; 1024 rows: as fast as one block).
constexpr std::int64_t kFullBlockRows = 1024;

// The scores a block of a sequence of at most `longest` tokens needs: a full block
// min(len, kFullBlockRows) x len, a band block (only when kBandRows + 2 window < len) kBandRows x
// fewer than len keys.
std::int64_t block_scores(std::int64_t longest) {
  return std::min(longest, kFullBlockRows) * longest;
}

// softmax(q·kᵀ · scale + bias)·v for query rows [r0, r1) of one (sequence, head) over keys
// [k0, k1), rows of q, k, v and out already at the sequence's start. With a window, scores of
// keys farther than it from their query are the float minimum (weight 0).
void attention_block(const float* qh, const float* kh, const float* vh, float* out,
                     const AttentionShape& shape, std::int64_t h, float scale, std::int64_t r0,
                     std::int64_t r1, std::int64_t k0, std::int64_t k1, float* scores) {
  const std::int64_t d = shape.head_dim;
  const std::int64_t ld = shape.ld_qkv;
  const std::int64_t hidden = shape.num_heads * d;
  const std::int64_t rows = r1 - r0;
  const std::int64_t keys = k1 - k0;
  const float* q0 = qh + r0 * ld;
  const float* key0 = kh + k0 * ld;
  const bool bf16 = shape.bf16_products;
  if (!bf16 || !gemm_bf16(true, rows, keys, d, scale, q0, ld, key0, ld, scores, keys))
    gemm(false, true, rows, keys, d, scale, q0, ld, key0, ld, 0.0f, scores, keys);
  if (const float* bias = shape.distance_bias.values; bias != nullptr) {
    // Query r's keys k0..k1-1 sit at offsets k0-r..k1-1-r: one contiguous run of the table.
    const float* head_bias = bias + h * shape.distance_bias.stride + shape.distance_bias.center;
    for (std::int64_t r = 0; r < rows; ++r) {
      float* row = scores + r * keys;
      const float* offsets_bias = head_bias + k0 - (r0 + r);
      for (std::int64_t c = 0; c < keys; ++c) row[c] += offsets_bias[c];
    }
  }
  if (shape.window >= 0) {
    // Query r0 + r sees keys [r0 + r - window, r0 + r + window]; the block's keys around that
    // run get the float minimum. The query itself is always among the block's keys.
    constexpr float kMasked = std::numeric_limits<float>::lowest();
    for (std::int64_t r = 0; r < rows; ++r) {
      float* row = scores + r * keys;
      const std::int64_t query = r0 + r;
      const std::int64_t first = std::max(k0, query - shape.window) - k0;
      const std::int64_t end = std::min(k1, query + shape.window + 1) - k0;
      std::fill(row, row + first, kMasked);
      std::fill(row + end, row + keys, kMasked);
    }
  }
  // Rows are short and many pairs run at once: stay on this thread.
  for (std::int64_t r = 0; r < rows; ++r) softmax_row(scores + r * keys, keys);
  const float* v0 = vh + k0 * ld;
  float* out0 = out + r0 * hidden;
  if (!bf16 || !gemm_bf16(false, rows, d, keys, 1.0f, scores, keys, v0, ld, out0, hidden))
    gemm(false, false, rows, d, keys, 1.0f, scores, keys, v0, ld, 0.0f, out0, hidden);
}

}  // namespace

std::size_t self_attention_scratch_floats(const std::size_t* offsets, std::size_t num_seqs) {
  std::int64_t longest = 0;
  for (std::size_t s = 0; s < num_seqs; ++s)
    longest =
        std::max<std::int64_t>(longest, static_cast<std::int64_t>(offsets[s + 1] - offsets[s]));
  return static_cast<std::size_t>(std::max(1, omp_get_max_threads())) *
         static_cast<std::size_t>(block_scores(longest));
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
  // block_scores(longest) floats per thread; the row stride is the block's key count.
  const std::int64_t per_thread = block_scores(longest);
  float* scores_all = scratch;
  const auto pairs = static_cast<std::int64_t>(num_seqs) * heads;

#pragma omp parallel for schedule(dynamic, 1) num_threads(threads)
  for (std::int64_t p = 0; p < pairs; ++p) {
    const std::int64_t s = p / heads;
    const std::int64_t h = p % heads;
    const auto begin = static_cast<std::int64_t>(offsets[s]);
    const std::int64_t len = static_cast<std::int64_t>(offsets[s + 1]) - begin;
    if (len == 0) continue;
    float* scores = scores_all + static_cast<std::int64_t>(omp_get_thread_num()) * per_thread;
    const float* qh = q + begin * ld + h * d;
    const float* kh = k + begin * ld + h * d;
    const float* vh = v + begin * ld + h * d;
    float* out = ctx + begin * hidden + h * d;
    // A band narrower than the sequence: blocks of query rows, each over its keys only.
    if (shape.window >= 0 && kBandRows + 2 * shape.window < len) {
      for (std::int64_t r0 = 0; r0 < len; r0 += kBandRows) {
        const std::int64_t r1 = std::min(len, r0 + kBandRows);
        const std::int64_t k0 = std::max<std::int64_t>(0, r0 - shape.window);
        const std::int64_t k1 = std::min(len, r1 + shape.window);
        attention_block(qh, kh, vh, out, shape, h, scale, r0, r1, k0, k1, scores);
      }
    } else {
      for (std::int64_t r0 = 0; r0 < len; r0 += kFullBlockRows) {
        const std::int64_t r1 = std::min(len, r0 + kFullBlockRows);
        attention_block(qh, kh, vh, out, shape, h, scale, r0, r1, 0, len, scores);
      }
    }
  }
}

}  // namespace onepass::kernels
