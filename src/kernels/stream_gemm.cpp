#include "kernels/stream_gemm.h"

#include <algorithm>
#include <cstddef>
#include <vector>

#include "kernels/dispatch.h"
#include "kernels/stream_gemm_avx512.h"

namespace onepass::kernels {

using avx512::kPanel;

#if defined(ONEPASS_STREAM_GEMM_AVX512)
namespace {

using avx512::kLineBytes;
using avx512::kMaxTileRows;

// Rows are split into chunks of row tiles; a chunk's tiles work through one panel (from L2)
// before the next. Up to kOneChunkBytes of copied rows (a request or a small batch) stay in L2
// as one chunk, and threads split the panels: each weight is read from memory once. Above, a
// chunk holds about kChunkBytes of rows, and threads split the chunks: each thread reads the
// weights from the shared cache once per chunk of its own.
constexpr std::int64_t kOneChunkBytes = 1 << 20;
constexpr std::int64_t kChunkBytes = 512 << 10;

// The first of n items in part `i` of `parts` even parts: rows of a tile (none holds more than
// kMaxTileRows), tiles of a chunk.
std::int64_t part_begin(std::int64_t i, std::int64_t n, std::int64_t parts) {
  return i * n / parts;
}

}  // namespace
#endif

bool has_stream_gemm() {
#if defined(ONEPASS_STREAM_GEMM_AVX512)
  // The instructions stream_gemm_avx512.cpp may use: the x86-64-v4 set, as the AVX-512
  // compilations of the dispatched kernels.
  return cpu_supports(Isa::kAvx512);
#else
  return false;
#endif
}

HugePageBuffer pack_stream_panels(const float* w, std::int64_t out, std::int64_t in) {
  const std::int64_t panels = (out + kPanel - 1) / kPanel;
  HugePageBuffer packed(static_cast<std::size_t>(panels * in * kPanel) * sizeof(float));
  auto* dst = static_cast<float*>(packed.data());  // zero-filled: the ragged panel's padding
  // Most of a model's load is here, and most of it is the first touch of the packed pages (the
  // kernel zeroing each huge page as it faults in; in a VM the host backing it too), which runs
  // on the thread that touches the page. So the panels are packed in parallel, each thread a
  // contiguous run of them (its own huge pages), each panel written front to back.
#pragma omp parallel for schedule(static) if (panels > 1)
  for (std::int64_t p = 0; p < panels; ++p) {
    float* panel = dst + p * in * kPanel;
    const float* rows = w + p * kPanel * in;
    const std::int64_t width = std::min<std::int64_t>(kPanel, out - p * kPanel);
    for (std::int64_t k = 0; k < in; ++k) {
      for (std::int64_t j = 0; j < width; ++j) panel[k * kPanel + j] = rows[j * in + k];
    }
  }
  return packed;
}

void stream_linear(const float* x, std::int64_t rows, std::int64_t ldx, const float* panels,
                   std::int64_t in, std::int64_t out, const float* bias, Activation act,
                   bool accumulate, float* y) {
#if defined(ONEPASS_STREAM_GEMM_AVX512)
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
  const avx512::FinishFn finish_tile = avx512::finish_of(act);

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
        avx512::tile_of_rows(static_cast<int>(n))(
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
