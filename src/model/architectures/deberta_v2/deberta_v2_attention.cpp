#include "model/architectures/deberta_v2/deberta_v2_attention.h"

#include <algorithm>
#include <cmath>

#include "kernels/elementwise.h"

namespace onepass::model::deberta_v2 {
namespace {

// Widest window of relative rows an L-token sequence can reach: at most 2 L - 1 distances, at
// most 2 att_span rows.
std::size_t window_rows(int seq_len, const RelativeIndex& index) {
  return static_cast<std::size_t>(std::min(2 * index.att_span(), 2 * seq_len - 1));
}

// Edge of the square tiles of the p2c transposition: two 16x16 float tiles stay in L1.
constexpr int kTile = 16;

// Query (c2p) or key (p2c) rows whose relative products are taken together. Each block reaches
// block + L - 1 relative rows instead of the sequence's 2 L - 1, so a small block halves the
// products; 6 is the row block of the register-blocked kernel, so no call has a ragged block
// except the last.
constexpr int kRowBlock = 6;

// One relative table of a head, fp32 transposed or packed as bf16 pairs.
struct RelativeTable {
  const float* transposed;
  int ld_transposed;
  const std::uint32_t* pairs;
  int ld_pairs;
  bool present() const { return transposed != nullptr || pairs != nullptr; }
};

// out[rows, width] = a[rows, d] . table rows lo .. lo + width - 1.
void relative_product(const Gemm& gemm, const RelativeTable& t, int rows, int width, int d,
                      const float* a, int lda, int lo, float* out) {
  if (t.pairs != nullptr)
    gemm.nn_pairs(rows, width, d, a, lda, t.pairs + lo, t.ld_pairs, out, width);
  else
    gemm.nn(rows, width, d, a, lda, t.transposed + lo, t.ld_transposed, out, width);
}

}  // namespace

std::size_t attention_scratch_floats(int seq_len, const RelativeIndex& index) {
  const auto l = static_cast<std::size_t>(seq_len);
  // scores [L, L] + p2c by key [L, L] + one block's relative products [kRowBlock, W] + one row.
  return 2 * l * l + kRowBlock * window_rows(seq_len, index) + l;
}

float attention_scale(int head_size, int relative_terms) {
  // torch.sqrt(torch.tensor(size, dtype=float) * scale_factor): float32 product, float32 sqrt.
  return std::sqrt(static_cast<float>(head_size) * static_cast<float>(1 + relative_terms));
}

void disentangled_attention_head(const HeadView& h, const RelativeIndex& index, float scale,
                                 const Gemm& gemm, float* scratch) {
  const int n = h.seq_len;
  const int d = h.head_size;
  const std::size_t ln = static_cast<std::size_t>(n);
  float* scores = scratch;
  float* p2c_by_key = scores + ln * ln;
  float* block = p2c_by_key + ln * ln;  // [kRowBlock, width] relative products
  float* row_terms = block + kRowBlock * window_rows(n, index);
  const int center = index.max_len() - 1;  // table entry of distance 0

  const RelativeTable pos_key{h.pos_key_t, h.ld_pos_key_t, h.pos_key_pairs, h.ld_pos_key_pairs};
  const RelativeTable pos_query{h.pos_query_t, h.ld_pos_query_t, h.pos_query_pairs,
                                h.ld_pos_query_pairs};

  gemm.nt(n, n, d, h.q, h.ldq, h.k, h.ldk, scores, n);

  if (pos_query.present()) {
    // HF's gather before its transposition: p2c_by_key[j, i] = k_j . pos_query[p2c(j - i)].
    // p2c is non-increasing in j - i, so keys j0..j1-1 reach rows p2c(j1 - 1) .. p2c(j0 - n + 1).
    const int* table = index.p2c_by_query_offset() + center;
    for (int j0 = 0; j0 < n; j0 += kRowBlock) {
      const int j1 = std::min(n, j0 + kRowBlock);
      const int lo = index.p2c(j1 - 1);
      const int width = index.p2c(j0 - (n - 1)) - lo + 1;
      relative_product(gemm, pos_query, j1 - j0, width, d,
                       h.k + static_cast<std::size_t>(j0) * h.ldk, h.ldk, lo, block);
      for (int j = j0; j < j1; ++j)
        kernels::gather_row(block + static_cast<std::size_t>(j - j0) * width, table - j, lo, n,
                            p2c_by_key + static_cast<std::size_t>(j) * ln);
    }
    // ... and the transposition, added onto the content scores tile by tile.
    for (int i0 = 0; i0 < n; i0 += kTile) {
      const int i1 = std::min(n, i0 + kTile);
      for (int j0 = 0; j0 < n; j0 += kTile) {
        const int j1 = std::min(n, j0 + kTile);
        for (int i = i0; i < i1; ++i) {
          float* s = scores + static_cast<std::size_t>(i) * ln;
          for (int j = j0; j < j1; ++j) s[j] += p2c_by_key[static_cast<std::size_t>(j) * ln + i];
        }
      }
    }
  }

  // Block by block of queries while it is in L1: c2p_i gathered, the sum divided by HF's scale
  // (HF divides each term separately; one division of the sum differs by an ulp), softmax.
  const int* c2p_table = index.c2p_by_key_offset() + center;
  for (int i0 = 0; i0 < n; i0 += kRowBlock) {
    const int i1 = std::min(n, i0 + kRowBlock);
    int lo = 0;
    int width = 0;
    if (pos_key.present()) {
      // c2p is non-decreasing in i - j: queries i0..i1-1 reach rows c2p(i0 - n + 1) .. c2p(i1 - 1).
      lo = index.c2p(i0 - (n - 1));
      width = index.c2p(i1 - 1) - lo + 1;
      relative_product(gemm, pos_key, i1 - i0, width, d, h.q + static_cast<std::size_t>(i0) * h.ldq,
                       h.ldq, lo, block);
    }
    for (int i = i0; i < i1; ++i) {
      float* s = scores + static_cast<std::size_t>(i) * ln;
      if (pos_key.present()) {
        kernels::gather_row(block + static_cast<std::size_t>(i - i0) * width, c2p_table - i, lo, n,
                            row_terms);
        for (int j = 0; j < n; ++j) s[j] = (s[j] + row_terms[j]) / scale;
      } else {
        for (int j = 0; j < n; ++j) s[j] /= scale;
      }
      gemm.softmax(1, n, s, n);
    }
  }
  gemm.nn(n, d, n, scores, n, h.v, h.ldv, h.out, h.ldo);
}

}  // namespace onepass::model::deberta_v2
