#include "kernels/stream_gemm.h"

#include <algorithm>
#include <array>
#include <cstddef>
#include <utility>
#include <vector>

#include "kernels/vec_math.h"

#if defined(__AVX512F__)
#include <immintrin.h>
// GCC 12's AVX-512 headers start some intrinsics from a deliberately undefined register
// (_mm512_undefined_*), which -Wmaybe-uninitialized reports at every inlined use.
#if !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#endif

namespace onepass::kernels {
namespace {

constexpr std::int64_t kPanel = 32;  // output channels per packed panel (two zmm)

#if defined(__AVX512F__)

constexpr int kMaxTileRows = 14;  // 28 accumulators + 2 weight vectors + 1 broadcast: 31 zmm
constexpr std::int64_t kLineBytes = 64;
// Rows are split into chunks of row tiles; a chunk's tiles work through one panel (from L2)
// before the next. Up to kOneChunkBytes of copied rows (a request or a small batch) stay in L2
// as one chunk, and threads split the panels: each weight is read from memory once. Above, a
// chunk holds about kChunkBytes of rows, and threads split the chunks: each thread reads the
// weights from the shared cache once per chunk of its own.
constexpr std::int64_t kOneChunkBytes = 1 << 20;
constexpr std::int64_t kChunkBytes = 512 << 10;

// acc[R, 32] = a · panel, a the tile's rows k-major (a[k R + r]). Meanwhile prefetches `lines`
// cache lines from `prefetch` into L2, spread evenly over the k loop (null: none). (Splitting k
// into blocks that keep the panel in L1 across a chunk's tiles was 5-15% slower here.)
template <int R>
void tile(const float* a, const float* panel, std::int64_t in, const char* prefetch,
          std::int64_t lines, float* acc) {
  __m512 lo[R], hi[R];
  for (int r = 0; r < R; ++r) lo[r] = hi[r] = _mm512_setzero_ps();
  // Line of step k: (k · step) >> 16, step = lines / in in 16.16 fixed point (no division in the
  // loop); at more than one line per step (a single tile per panel: two), that line and the next.
  const std::int64_t step = prefetch != nullptr ? (lines << 16) / in : 0;
  const bool two_per_step = lines > in;
  for (std::int64_t k = 0; k < in; ++k) {
    if (prefetch != nullptr) {
      const char* line = prefetch + ((k * step) >> 16) * kLineBytes;
      _mm_prefetch(line, _MM_HINT_T1);
      if (two_per_step) _mm_prefetch(line + kLineBytes, _MM_HINT_T1);
    }
    const __m512 w_lo = _mm512_loadu_ps(panel + k * kPanel);
    const __m512 w_hi = _mm512_loadu_ps(panel + k * kPanel + 16);
    for (int r = 0; r < R; ++r) {
      const __m512 av = _mm512_set1_ps(a[k * R + r]);
      lo[r] = _mm512_fmadd_ps(av, w_lo, lo[r]);
      hi[r] = _mm512_fmadd_ps(av, w_hi, hi[r]);
    }
  }
  for (int r = 0; r < R; ++r) {
    _mm512_storeu_ps(acc + r * kPanel, lo[r]);
    _mm512_storeu_ps(acc + r * kPanel + 16, hi[r]);
  }
}

using TileFn = void (*)(const float*, const float*, std::int64_t, const char*, std::int64_t,
                        float*);

template <int... I>
constexpr std::array<TileFn, sizeof...(I)> tiles_by_rows(std::integer_sequence<int, I...>) {
  return {{&tile<I + 1>...}};
}
// kTiles[R - 1] is the tile of R rows.
constexpr auto kTiles = tiles_by_rows(std::make_integer_sequence<int, kMaxTileRows>{});

// y[rows, cols] (+)= act(acc + bias) for one tile against one panel; cols <= 32 (the last panel
// of a ragged out_features is masked).
template <Activation kAct>
void finish(const float* acc, std::int64_t rows, const float* bias, std::int64_t cols,
            bool accumulate, float* y, std::int64_t ldy) {
  const auto mask_of = [](std::int64_t n) {
    return n >= 16 ? __mmask16{0xFFFF}
                   : static_cast<__mmask16>((1u << std::max<std::int64_t>(n, 0)) - 1);
  };
  const __mmask16 m_lo = mask_of(cols), m_hi = mask_of(cols - 16);
  const __m512 b_lo = bias != nullptr ? _mm512_maskz_loadu_ps(m_lo, bias) : _mm512_setzero_ps();
  const __m512 b_hi =
      bias != nullptr ? _mm512_maskz_loadu_ps(m_hi, bias + 16) : _mm512_setzero_ps();
  for (std::int64_t r = 0; r < rows; ++r) {
    float* dst = y + r * ldy;
    __m512 v_lo = vec::activate<kAct>(_mm512_add_ps(_mm512_loadu_ps(acc + r * kPanel), b_lo));
    __m512 v_hi = vec::activate<kAct>(_mm512_add_ps(_mm512_loadu_ps(acc + r * kPanel + 16), b_hi));
    if (accumulate) {
      v_lo = _mm512_add_ps(_mm512_maskz_loadu_ps(m_lo, dst), v_lo);
      v_hi = _mm512_add_ps(_mm512_maskz_loadu_ps(m_hi, dst + 16), v_hi);
    }
    _mm512_mask_storeu_ps(dst, m_lo, v_lo);
    _mm512_mask_storeu_ps(dst + 16, m_hi, v_hi);
  }
}

using FinishFn = void (*)(const float*, std::int64_t, const float*, std::int64_t, bool, float*,
                          std::int64_t);

// The first of n items in part `i` of `parts` even parts: rows of a tile (none holds more than
// kMaxTileRows), tiles of a chunk.
std::int64_t part_begin(std::int64_t i, std::int64_t n, std::int64_t parts) {
  return i * n / parts;
}

#endif  // __AVX512F__

}  // namespace

bool has_stream_gemm() {
#if defined(__AVX512F__)
  return true;
#else
  return false;
#endif
}

HugePageBuffer pack_stream_panels(const float* w, std::int64_t out, std::int64_t in) {
  const std::int64_t panels = (out + kPanel - 1) / kPanel;
  HugePageBuffer packed(static_cast<std::size_t>(panels * in * kPanel) * sizeof(float));
  auto* dst = static_cast<float*>(packed.data());  // zero-filled: the ragged panel's padding
  for (std::int64_t c = 0; c < out; ++c) {
    float* column = dst + (c / kPanel) * in * kPanel + c % kPanel;
    for (std::int64_t k = 0; k < in; ++k) column[k * kPanel] = w[c * in + k];
  }
  return packed;
}

void stream_linear(const float* x, std::int64_t rows, std::int64_t ldx, const float* panels,
                   std::int64_t in, std::int64_t out, const float* bias, Activation act,
                   bool accumulate, float* y) {
#if defined(__AVX512F__)
  const std::int64_t n_panels = (out + kPanel - 1) / kPanel;
  const std::int64_t n_tiles = (rows + kMaxTileRows - 1) / kMaxTileRows;
  const std::int64_t row_bytes = in * static_cast<std::int64_t>(sizeof(float));
  const std::int64_t tiles_per_chunk =
      std::max<std::int64_t>(1, kChunkBytes / (kMaxTileRows * row_bytes));
  const std::int64_t n_chunks =
      rows * row_bytes <= kOneChunkBytes ? 1 : (n_tiles + tiles_per_chunk - 1) / tiles_per_chunk;
  const std::int64_t items = n_chunks * n_panels;
  const std::int64_t panel_lines =
      in * kPanel * static_cast<std::int64_t>(sizeof(float)) / kLineBytes;
  FinishFn finish_tile = nullptr;
  vec::with_activation(act, [&](auto kind) { finish_tile = &finish<decltype(kind)::value>; });

  thread_local std::vector<float> copied;
  if (copied.size() < static_cast<std::size_t>(rows * in))
    copied.resize(static_cast<std::size_t>(rows * in));
  float* const a = copied.data();

#pragma omp parallel if (items > 1)
  {
    // Tile t's rows, k-major, at a + first(t) · in.
#pragma omp for schedule(static)
    for (std::int64_t t = 0; t < n_tiles; ++t) {
      const std::int64_t first = part_begin(t, rows, n_tiles);
      const std::int64_t n = part_begin(t + 1, rows, n_tiles) - first;
      float* dst = a + first * in;
      const float* src = x + first * ldx;
      for (std::int64_t k = 0; k < in; ++k, dst += n) {
        for (std::int64_t r = 0; r < n; ++r) dst[r] = src[r * ldx + k];
      }
    }
    // Item = (chunk of row tiles, panel), panels innermost: a thread's items are consecutive
    // panels, so the panel it prefetches is the one it takes next. Chunk c holds tiles
    // [part_begin(c), part_begin(c + 1)) of even counts.
#pragma omp for schedule(static)
    for (std::int64_t item = 0; item < items; ++item) {
      const std::int64_t chunk = item / n_panels, p = item % n_panels;
      const float* panel = panels + p * in * kPanel;
      const char* next = p + 1 < n_panels       ? reinterpret_cast<const char*>(panel + in * kPanel)
                         : chunk + 1 < n_chunks ? reinterpret_cast<const char*>(panels)
                                                : nullptr;
      const std::int64_t col = p * kPanel, cols = std::min(kPanel, out - col);
      const std::int64_t t_begin = part_begin(chunk, n_tiles, n_chunks);
      const std::int64_t t_end = part_begin(chunk + 1, n_tiles, n_chunks);
      alignas(64) float acc[kMaxTileRows * kPanel];
      for (std::int64_t t = t_begin; t < t_end; ++t) {
        const std::int64_t first = part_begin(t, rows, n_tiles);
        const std::int64_t n = part_begin(t + 1, rows, n_tiles) - first;
        // This tile's share of the next panel's lines.
        const std::int64_t line_begin = (t - t_begin) * panel_lines / (t_end - t_begin);
        const std::int64_t line_end = (t - t_begin + 1) * panel_lines / (t_end - t_begin);
        kTiles[static_cast<std::size_t>(n - 1)](
            a + first * in, panel, in, next != nullptr ? next + line_begin * kLineBytes : nullptr,
            line_end - line_begin, acc);
        finish_tile(acc, n, bias != nullptr ? bias + col : nullptr, cols, accumulate,
                    y + first * out + col, out);
      }
    }
  }
#else
  (void)x, (void)rows, (void)ldx, (void)panels, (void)in, (void)out, (void)bias, (void)act,
      (void)accumulate, (void)y;
#endif
}

}  // namespace onepass::kernels
