// DeBERTa-v2 disentangled self-attention for one sequence and one head, on plain float rows.
//
// Hugging Face (DisentangledSelfAttention, v4.47.1) computes, for query i and key j:
//   score(i, j) = q_i . k_j / s + q_i . pk[c2p(i - j)] / s + k_j . pq[p2c(j - i)] / s
//   s = sqrt(head_size * (1 + number of c2p/p2c terms in pos_att_type))
// with pk / pq the key / query projections of the (normalised) relative embeddings. Instead of
// gathering [L, L, d] tensors, the c2p and p2c products are taken block by block of a few
// query (c2p) or key (p2c) rows, each against only the contiguous run of relative rows that
// block reaches (about L + block rows, where the whole sequence reaches 2 L - 1), and then
// gathered per (i, j) through RelativeIndex. The relative tables are stored transposed
// ([head_size, 2 att_span]) so that any run of rows is a plain column window. Padding-free:
// every token of the sequence is real, so the attention mask of HF is all ones here.
#pragma once

#include <cstddef>
#include <cstdint>

#include "model/architectures/deberta_v2/deberta_v2_relative.h"

namespace onepass::model::deberta_v2 {

// Row-major single-threaded products used per head. The model binds them to the kernels
// module; tests may bind naive loops.
struct Gemm {
  // c[m, n] = a[m, k] . b[n, k]^T
  void (*nt)(int m, int n, int k, const float* a, int lda, const float* b, int ldb, float* c,
             int ldc);
  // c[m, n] = a[m, k] . b[k, n]
  void (*nn)(int m, int n, int k, const float* a, int lda, const float* b, int ldb, float* c,
             int ldc);
  // Row-wise softmax over n entries of m rows, in place.
  void (*softmax)(int m, int n, float* x, int ldx);
  // c[m, n] = a[m, k] . B with B packed as bf16 k pairs (kernels/small_gemm_bf16.h); used for
  // the relative tables when HeadView carries them packed.
  void (*nn_pairs)(int m, int n, int k, const float* a, int lda, const std::uint32_t* bp, int ldp,
                   float* c, int ldc) = nullptr;
};

// One head of one sequence. Row r of each matrix starts at ptr + r * ld; the head's
// head_size columns start at ptr.
struct HeadView {
  int seq_len = 0;
  int head_size = 0;
  const float* q = nullptr;  // [seq_len, head_size]
  int ldq = 0;
  const float* k = nullptr;  // [seq_len, head_size]
  int ldk = 0;
  const float* v = nullptr;  // [seq_len, head_size]
  int ldv = 0;
  // Projected relative embeddings, transposed: [head_size, 2 att_span], dimension p of relative
  // row r at ptr[p * ld + r]; nullptr when the term is absent (pos_key for c2p, pos_query for
  // p2c).
  const float* pos_key_t = nullptr;
  int ld_pos_key_t = 0;
  const float* pos_query_t = nullptr;
  int ld_pos_query_t = 0;
  // The same tables as bf16 k pairs ([head_size / 2, 2 att_span] words, pair row pp at
  // ptr + pp * ld), for the reduced precisions; when set they replace pos_*_t and are read
  // through Gemm::nn_pairs.
  const std::uint32_t* pos_key_pairs = nullptr;
  int ld_pos_key_pairs = 0;
  const std::uint32_t* pos_query_pairs = nullptr;
  int ld_pos_query_pairs = 0;
  float* out = nullptr;  // [seq_len, head_size] context
  int ldo = 0;
};

// Floats of scratch one call needs for a sequence of seq_len tokens (at most index.max_len()).
std::size_t attention_scratch_floats(int seq_len, const RelativeIndex& index);

// HF's divisor sqrt(head_size * scale_factor), scale_factor = 1 + number of relative terms,
// computed in float32 as torch does.
float attention_scale(int head_size, int relative_terms);

// Computes out = softmax(score) . v for one head. scale is HF's divisor (attention_scale);
// the c2p / p2c terms are present exactly when pos_key_t / pos_query_t (or their packed
// forms) are set. scratch holds
// attention_scratch_floats(seq_len, index) floats. Does not allocate; thread-safe for distinct
// scratch / out.
void disentangled_attention_head(const HeadView& head, const RelativeIndex& index, float scale,
                                 const Gemm& gemm, float* scratch);

}  // namespace onepass::model::deberta_v2
