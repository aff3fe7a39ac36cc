// Scaled dot-product self-attention over a ragged batch, one sequence at a time: no padding, no
// mask. Q, K and V are column blocks of one token-major matrix (the fused QKV projection).
#pragma once

#include <cstddef>
#include <cstdint>

namespace onepass::kernels {

// An additive bias on the scores that depends only on where the key sits relative to the query
// (MPNet's relative position bias): score(head, i, j) += values[head * stride + center + j - i].
// stride = 2 * L - 1 and center = L - 1 for some L at least the batch's longest sequence, so
// that every offset a sequence has is in the table (MPNet builds it once, for max_tokens).
struct DistanceBias {
  const float* values = nullptr;  // [num_heads, stride]; null: no bias
  std::int64_t stride = 0;
  std::int64_t center = 0;
};

struct AttentionShape {
  std::int64_t num_heads = 0;
  std::int64_t head_dim = 0;
  std::int64_t ld_qkv = 0;  // row stride of q/k/v (3 * hidden for a fused QKV matrix)
  // Q·Kᵀ and P·V in bf16 with fp32 accumulation (kernels/small_gemm_bf16.h), for the bf16
  // precision; ignored where the build lacks AVX512-BF16. Softmax stays fp32.
  bool bf16_products = false;
  DistanceBias distance_bias{};
  // Local attention (ModernBERT's local layers): query i sees only keys j with |j - i| <= window,
  // as if every other key's score were the float minimum. Only the band of scores around the
  // diagonal is computed, a block of query rows at a time. -1: every key.
  std::int64_t window = -1;
};

// q, k, v: [total_tokens, ...] with row stride shape.ld_qkv, head h in columns
// [h * head_dim, (h + 1) * head_dim). offsets[0..num_seqs]: sequence s owns tokens
// [offsets[s], offsets[s + 1]). ctx: [total_tokens, num_heads * head_dim], written fully.
// softmax(q·kᵀ · scale + bias)·v per (sequence, head), parallel over those pairs on the calling
// thread's OpenMP team. scratch: self_attention_scratch_floats(offsets, num_seqs) floats, taken
// once per forward and reused by every layer.
void self_attention(const float* q, const float* k, const float* v, const AttentionShape& shape,
                    const std::size_t* offsets, std::size_t num_seqs, float scale, float* ctx,
                    float* scratch);

// Per thread of the current OpenMP team, the scores of one block of query rows: the whole
// [longest, longest] matrix up to 1024 tokens, blocks of 1024 rows beyond.
std::size_t self_attention_scratch_floats(const std::size_t* offsets, std::size_t num_seqs);

}  // namespace onepass::kernels
