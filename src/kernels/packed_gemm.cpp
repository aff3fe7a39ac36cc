#include "kernels/packed_gemm.h"

#include <algorithm>

#include "kernels/vec_math.h"

#if defined(__AVX2__) && defined(__FMA__)
#include <immintrin.h>
#endif

namespace onepass::kernels {
namespace {

constexpr std::int64_t kPanel = 16;  // output channels per packed panel (two ymm)

#if defined(__AVX2__) && defined(__FMA__)

constexpr int kRows = 6;  // rows per tile: 12 accumulators + 2 B + 1 broadcast
// The int16 tile needs a register more per step (vpmaddwd's product before the add): at 6 rows
// GCC kept accumulators in memory, at 4 every one stays in a register.
constexpr int kRowsS16 = 4;
// Work handed to a thread: kChunkRows rows against kGroupPanels panels. A panel (in · 64 bytes)
// then stays in L2 across the chunk's row tiles. Sizes do not change any result.
constexpr std::int64_t kChunkRows = 8 * kRows;
constexpr std::int64_t kGroupPanels = 4;

// acc[R, 16] = R rows of x · one panel. Its own function, ending in one store per accumulator:
// with the epilogue's loops in the same function GCC kept the accumulators in memory and
// stored all 12 at every k step, which halved the FMA rate.
template <int R>
void product(const float* x, std::int64_t ldx, const float* panel, std::int64_t in, float* acc) {
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
  for (int r = 0; r < R; ++r) {
    _mm256_store_ps(acc + r * kPanel, acc0[r]);
    _mm256_store_ps(acc + r * kPanel + 8, acc1[r]);
  }
}

// One tile: R rows of x against one panel, then bias, activation and the optional residual,
// written to the first `cols` (<= 16) columns of y.
template <int R>
void tile(const float* x, std::int64_t ldx, const float* panel, std::int64_t in, const float* bias,
          Activation act, bool accumulate, std::int64_t cols, float* y, std::int64_t ldy) {
  alignas(32) float acc[R * kPanel];
  product<R>(x, ldx, panel, in, acc);
  // (acc + b), the activation, then the residual; the last panel's ragged columns through
  // masked loads and stores, so that every column takes the same arithmetic.
  const bool full = cols == kPanel;
  const __m256i m0 = vec::tail_lanes(cols), m1 = vec::tail_lanes(cols - 8);
  const __m256 bias0 = bias ? _mm256_maskload_ps(bias, m0) : _mm256_setzero_ps();
  const __m256 bias1 = bias ? _mm256_maskload_ps(bias + 8, m1) : _mm256_setzero_ps();
  vec::with_activation(act, [&](auto kind) {
    constexpr Activation kAct = decltype(kind)::value;
    for (int r = 0; r < R; ++r) {
      float* dst = y + r * ldy;
      __m256 v0 = vec::activate<kAct>(_mm256_add_ps(_mm256_load_ps(acc + r * kPanel), bias0));
      __m256 v1 = vec::activate<kAct>(_mm256_add_ps(_mm256_load_ps(acc + r * kPanel + 8), bias1));
      if (full) {
        if (accumulate) {
          v0 = _mm256_add_ps(_mm256_loadu_ps(dst), v0);
          v1 = _mm256_add_ps(_mm256_loadu_ps(dst + 8), v1);
        }
        _mm256_storeu_ps(dst, v0);
        _mm256_storeu_ps(dst + 8, v1);
      } else {
        if (accumulate) {
          v0 = _mm256_add_ps(_mm256_maskload_ps(dst, m0), v0);
          v1 = _mm256_add_ps(_mm256_maskload_ps(dst + 8, m1), v1);
        }
        _mm256_maskstore_ps(dst, m0, v0);
        _mm256_maskstore_ps(dst + 8, m1, v1);
      }
    }
  });
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

// acc[R rows, cols] = x pairs · panel, x as int16 pairs (one int32 word per k pair, row stride
// ldx words), the panel as pack_panels_s8 lays it out.
template <int R>
void tile_s16(const std::int32_t* x, std::int64_t ldx, const std::int32_t* panel,
              std::int64_t pairs, std::int64_t cols, std::int32_t* acc, std::int64_t ldc) {
  __m256i acc0[R], acc1[R];
  for (int r = 0; r < R; ++r) acc0[r] = acc1[r] = _mm256_setzero_si256();
  for (std::int64_t pp = 0; pp < pairs; ++pp) {
    const __m256i b0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(panel + pp * kPanel));
    const __m256i b1 =
        _mm256_loadu_si256(reinterpret_cast<const __m256i*>(panel + pp * kPanel + 8));
    for (int r = 0; r < R; ++r) {
      const __m256i av = _mm256_set1_epi32(x[r * ldx + pp]);
      acc0[r] = _mm256_add_epi32(acc0[r], _mm256_madd_epi16(av, b0));
      acc1[r] = _mm256_add_epi32(acc1[r], _mm256_madd_epi16(av, b1));
    }
  }
  // One store per accumulator, then the copy out (see product<R>: indexed uses of the
  // accumulators after the loop made GCC keep them in memory, stored at every step).
  alignas(32) std::int32_t lanes[R * kPanel];
  for (int r = 0; r < R; ++r) {
    _mm256_store_si256(reinterpret_cast<__m256i*>(lanes + r * kPanel), acc0[r]);
    _mm256_store_si256(reinterpret_cast<__m256i*>(lanes + r * kPanel + 8), acc1[r]);
  }
  for (int r = 0; r < R; ++r)
    std::copy(lanes + r * kPanel, lanes + r * kPanel + cols, acc + r * ldc);
}

template <int R>
void tile_s16_rows(std::int64_t rows, const std::int32_t* x, std::int64_t ldx,
                   const std::int32_t* panel, std::int64_t pairs, std::int64_t cols,
                   std::int32_t* acc, std::int64_t ldc) {
  if constexpr (R > 0) {
    if (rows == R) return tile_s16<R>(x, ldx, panel, pairs, cols, acc, ldc);
    tile_s16_rows<R - 1>(rows, x, ldx, panel, pairs, cols, acc, ldc);
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

std::vector<std::int32_t> pack_panels_s8(const std::int8_t* q, std::int64_t out, std::int64_t in) {
  const std::int64_t panels = (out + kPanel - 1) / kPanel, pairs = (in + 1) / 2;
  std::vector<std::int32_t> packed(static_cast<std::size_t>(panels * pairs * kPanel), 0);
  for (std::int64_t c = 0; c < out; ++c) {
    std::int32_t* dst = packed.data() + (c / kPanel) * pairs * kPanel + c % kPanel;
    for (std::int64_t pp = 0; pp < pairs; ++pp) {
      const std::int64_t k = 2 * pp;
      const auto lo = static_cast<std::uint16_t>(static_cast<std::int16_t>(q[c * in + k]));
      const auto hi = k + 1 < in
                          ? static_cast<std::uint16_t>(static_cast<std::int16_t>(q[c * in + k + 1]))
                          : std::uint16_t{0};
      dst[pp * kPanel] = static_cast<std::int32_t>(static_cast<std::uint32_t>(hi) << 16 | lo);
    }
  }
  return packed;
}

void packed_gemm_u8s8(const std::uint8_t* xq, std::int64_t rows, std::int64_t in,
                      const std::int32_t* panels, std::int64_t out, std::int32_t* acc) {
#if defined(__AVX2__) && defined(__FMA__)
  // Activations widened once per call: word (r, pp) = xq[r, 2 pp] | xq[r, 2 pp + 1] << 16.
  const std::int64_t pairs = (in + 1) / 2;
  thread_local std::vector<std::int32_t> widened;
  if (widened.size() < static_cast<std::size_t>(rows * pairs))
    widened.resize(static_cast<std::size_t>(rows * pairs));
  std::int32_t* x = widened.data();
  for (std::int64_t r = 0; r < rows; ++r) {
    const std::uint8_t* src = xq + r * in;
    std::int32_t* dst = x + r * pairs;
    for (std::int64_t pp = 0; pp < pairs; ++pp) {
      const std::uint32_t lo = src[2 * pp];
      const std::uint32_t hi = 2 * pp + 1 < in ? src[2 * pp + 1] : 0u;
      dst[pp] = static_cast<std::int32_t>(hi << 16 | lo);
    }
  }
  const std::int64_t n_panels = (out + kPanel - 1) / kPanel;
  const std::int64_t n_groups = (n_panels + kGroupPanels - 1) / kGroupPanels;
  const std::int64_t n_chunks = (rows + kChunkRows - 1) / kChunkRows;
  const std::int64_t items = n_chunks * n_groups;
#pragma omp parallel for schedule(static) if (items > 1)
  for (std::int64_t item = 0; item < items; ++item) {
    const std::int64_t chunk = item / n_groups, group = item % n_groups;
    const std::int64_t row_end = std::min(rows, (chunk + 1) * kChunkRows);
    const std::int64_t panel_end = std::min(n_panels, (group + 1) * kGroupPanels);
    for (std::int64_t p = group * kGroupPanels; p < panel_end; ++p) {
      const std::int32_t* panel = panels + p * pairs * kPanel;
      const std::int64_t col = p * kPanel, cols = std::min(kPanel, out - col);
      for (std::int64_t r = chunk * kChunkRows; r < row_end; r += kRowsS16) {
        const std::int64_t n = std::min<std::int64_t>(kRowsS16, row_end - r);
        tile_s16_rows<kRowsS16>(n, x + r * pairs, pairs, panel, pairs, cols, acc + r * out + col,
                                out);
      }
    }
  }
#else
  (void)xq, (void)rows, (void)in, (void)panels, (void)out, (void)acc;
#endif
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
