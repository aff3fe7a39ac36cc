#include "model/architectures/deberta_v2_attention.h"

#include <algorithm>
#include <cmath>

namespace onepass::model::deberta_v2 {
namespace {

// Widest window of relative rows an L-token sequence can reach: at most 2 L - 1 distances, at
// most 2 att_span rows.
std::size_t window_rows(int seq_len, const RelativeIndex& index) {
  return static_cast<std::size_t>(std::min(2 * index.att_span(), 2 * seq_len - 1));
}

// Tile edge for the (i, j) combine loop: the transposed p2c tile read column-wise stays in L1.
constexpr int kTile = 32;

}  // namespace

std::size_t attention_scratch_floats(int seq_len, const RelativeIndex& index) {
  const auto l = static_cast<std::size_t>(seq_len);
  // scores [L, L] + p2c gathered per key [L, L] + c2p products [L, W] + p2c products [L, W].
  return 2 * l * l + 2 * l * window_rows(seq_len, index);
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
  const std::size_t w = window_rows(n, index);
  float* scores = scratch;
  float* p2c_by_key = scores + ln * ln;
  float* c2p = p2c_by_key + ln * ln;
  float* p2c = c2p + ln * w;
  const int center = index.max_len() - 1;  // table offset of distance 0

  gemm.nt(n, n, d, h.q, h.ldq, h.k, h.ldk, scores, n);

  // c2p rows are non-decreasing in i - j: the window spans distance -(n-1) to n-1.
  const int c_lo = index.c2p(-(n - 1));
  const int c_width = index.c2p(n - 1) - c_lo + 1;
  if (h.pos_key != nullptr) {
    gemm.nt(n, c_width, d, h.q, h.ldq, h.pos_key + static_cast<std::size_t>(c_lo) * h.ld_pos_key,
            h.ld_pos_key, c2p, c_width);
  }
  // p2c rows are non-increasing in j - i.
  const int p_lo = index.p2c(n - 1);
  const int p_width = index.p2c(-(n - 1)) - p_lo + 1;
  if (h.pos_query != nullptr) {
    gemm.nt(n, p_width, d, h.k, h.ldk,
            h.pos_query + static_cast<std::size_t>(p_lo) * h.ld_pos_query, h.ld_pos_query, p2c,
            p_width);
    // HF's gather before its transpose: row j holds key j against pos_query row p2c(j - i).
    const int* table = index.p2c_table() + center;
    for (int j = 0; j < n; ++j) {
      const float* row = p2c + static_cast<std::size_t>(j) * p_width;
      const int* t = table + j;
      float* dst = p2c_by_key + static_cast<std::size_t>(j) * ln;
      for (int i = 0; i < n; ++i) dst[i] = row[t[-i] - p_lo];
    }
  }

  const bool has_c2p = h.pos_key != nullptr;
  const bool has_p2c = h.pos_query != nullptr;
  const int* c2p_table = index.c2p_table() + center;
  for (int i0 = 0; i0 < n; i0 += kTile) {
    const int i1 = std::min(n, i0 + kTile);
    for (int j0 = 0; j0 < n; j0 += kTile) {
      const int j1 = std::min(n, j0 + kTile);
      for (int i = i0; i < i1; ++i) {
        float* srow = scores + static_cast<std::size_t>(i) * ln;
        const float* crow = c2p + static_cast<std::size_t>(i) * c_width;
        const int* ct = c2p_table + i;
        for (int j = j0; j < j1; ++j) {
          float rel = 0.0f;
          if (has_c2p) rel += crow[ct[-j] - c_lo];
          if (has_p2c) rel += p2c_by_key[static_cast<std::size_t>(j) * ln + i];
          // HF divides each term by the same scale; one division of the sum differs by an ulp.
          srow[j] = (srow[j] + rel) / scale;
        }
      }
    }
  }

  gemm.softmax(n, n, scores, n);
  gemm.nn(n, d, n, scores, n, h.v, h.ldv, h.out, h.ldo);
}

}  // namespace onepass::model::deberta_v2
