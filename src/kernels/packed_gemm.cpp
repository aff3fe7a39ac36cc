#include "kernels/packed_gemm.h"

#include <algorithm>

#include "kernels/vec_math.h"

#if defined(__AVX2__) && defined(__FMA__)
#include <immintrin.h>
#endif

namespace onepass::kernels {
namespace {

constexpr std::int64_t kPanel = 16;  // output channels per packed panel (two ymm)
constexpr int kRows = 6;             // rows per tile: 12 accumulators + 2 B + 1 broadcast
// Work handed to a thread: kChunkRows rows against kGroupPanels panels. A panel (in · 64 bytes)
// then stays in L2 across the chunk's row tiles. Sizes do not change any result.
constexpr std::int64_t kChunkRows = 8 * kRows;
constexpr std::int64_t kGroupPanels = 4;

#if defined(__AVX2__) && defined(__FMA__)

// One tile: R rows of x against one panel, then bias, activation and the optional residual,
// written to the first `cols` (<= 16) columns of y.
template <int R>
void tile(const float* x, std::int64_t ldx, const float* panel, std::int64_t in, const float* bias,
          Activation act, bool accumulate, std::int64_t cols, float* y, std::int64_t ldy) {
  __m256 acc0[R], acc1[R];
  for (int r = 0; r < R; ++r) acc0[r] = acc1[r] = _mm256_setzero_ps();
  for (std::int64_t p = 0; p < in; ++p) {
    const __m256 b0 = _mm256_loadu_ps(panel + p * kPanel);
    const __m256 b1 = _mm256_loadu_ps(panel + p * kPanel + 8);
    for (int r = 0; r < R; ++r) {
      const __m256 av = _mm256_broadcast_ss(x + r * ldx + p);
      acc0[r] = _mm256_fmadd_ps(av, b0, acc0[r]);
      acc1[r] = _mm256_fmadd_ps(av, b1, acc1[r]);
    }
  }
  if (cols == kPanel && act == Activation::kIdentity) {
    const __m256 bias0 = bias ? _mm256_loadu_ps(bias) : _mm256_setzero_ps();
    const __m256 bias1 = bias ? _mm256_loadu_ps(bias + 8) : _mm256_setzero_ps();
    for (int r = 0; r < R; ++r) {
      float* dst = y + r * ldy;
      __m256 v0 = _mm256_add_ps(acc0[r], bias0), v1 = _mm256_add_ps(acc1[r], bias1);
      if (accumulate) {
        v0 = _mm256_add_ps(_mm256_loadu_ps(dst), v0);
        v1 = _mm256_add_ps(_mm256_loadu_ps(dst + 8), v1);
      }
      _mm256_storeu_ps(dst, v0);
      _mm256_storeu_ps(dst + 8, v1);
    }
    return;
  }
  // Activations and the last panel's ragged columns, element by element (same arithmetic as
  // the vector path above: (acc + b), act, then residual + value).
  alignas(32) float lanes[kPanel];
  for (int r = 0; r < R; ++r) {
    _mm256_store_ps(lanes, acc0[r]);
    _mm256_store_ps(lanes + 8, acc1[r]);
    float* dst = y + r * ldy;
    for (std::int64_t j = 0; j < cols; ++j) {
      float v = bias ? lanes[j] + bias[j] : lanes[j] + 0.0f;
      v = vec::activate_scalar(v, act);
      dst[j] = accumulate ? dst[j] + v : v;
    }
  }
}

template <int R>
void tile_rows(std::int64_t rows, const float* x, std::int64_t ldx, const float* panel,
               std::int64_t in, const float* bias, Activation act, bool accumulate,
               std::int64_t cols, float* y, std::int64_t ldy) {
  if constexpr (R > 0) {
    if (rows == R) return tile<R>(x, ldx, panel, in, bias, act, accumulate, cols, y, ldy);
    tile_rows<R - 1>(rows, x, ldx, panel, in, bias, act, accumulate, cols, y, ldy);
  }
}

#endif  // AVX2 + FMA

}  // namespace

bool has_packed_gemm() {
#if defined(__AVX2__) && defined(__FMA__)
  return true;
#else
  return false;
#endif
}

std::vector<float> pack_panels(const float* w, std::int64_t out, std::int64_t in) {
  const std::int64_t panels = (out + kPanel - 1) / kPanel;
  std::vector<float> packed(static_cast<std::size_t>(panels * in * kPanel), 0.0f);
  for (std::int64_t c = 0; c < out; ++c) {
    float* dst = packed.data() + (c / kPanel) * in * kPanel + c % kPanel;
    for (std::int64_t k = 0; k < in; ++k) dst[k * kPanel] = w[c * in + k];
  }
  return packed;
}

void packed_linear(const float* x, std::int64_t rows, std::int64_t ldx, const float* panels,
                   std::int64_t in, std::int64_t out, const float* bias, Activation act,
                   bool accumulate, float* y) {
#if defined(__AVX2__) && defined(__FMA__)
  const std::int64_t n_panels = (out + kPanel - 1) / kPanel;
  const std::int64_t n_groups = (n_panels + kGroupPanels - 1) / kGroupPanels;
  const std::int64_t n_chunks = (rows + kChunkRows - 1) / kChunkRows;
  const std::int64_t items = n_chunks * n_groups;
  // Which thread computes an element never changes its value: the split is free to follow the
  // team size.
#pragma omp parallel for schedule(static) if (items > 1)
  for (std::int64_t item = 0; item < items; ++item) {
    const std::int64_t chunk = item / n_groups, group = item % n_groups;
    const std::int64_t row_end = std::min(rows, (chunk + 1) * kChunkRows);
    const std::int64_t panel_end = std::min(n_panels, (group + 1) * kGroupPanels);
    for (std::int64_t p = group * kGroupPanels; p < panel_end; ++p) {
      const float* panel = panels + p * in * kPanel;
      const std::int64_t col = p * kPanel, cols = std::min(kPanel, out - col);
      const float* b = bias ? bias + col : nullptr;
      for (std::int64_t r = chunk * kChunkRows; r < row_end; r += kRows) {
        const std::int64_t n = std::min<std::int64_t>(kRows, row_end - r);
        tile_rows<kRows>(n, x + r * ldx, ldx, panel, in, b, act, accumulate, cols,
                         y + r * out + col, out);
      }
    }
  }
#else
  (void)x, (void)rows, (void)ldx, (void)panels, (void)in, (void)out, (void)bias, (void)act,
      (void)accumulate, (void)y;
#endif
}

}  // namespace onepass::kernels
