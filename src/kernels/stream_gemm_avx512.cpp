#include "kernels/stream_gemm_avx512.h"

#include <array>
#include <utility>

#include "kernels/vec_math.h"

#if defined(__AVX512F__)
#include <immintrin.h>
// GCC 12's AVX-512 headers start some intrinsics from a deliberately undefined register
// (_mm512_undefined_*), which -Wmaybe-uninitialized reports at every inlined use.
#if !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

namespace onepass::kernels::avx512 {
namespace {

// (Splitting k into blocks that keep the panel in L1 across a chunk's tiles was 5-15% slower
// here.)
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

template <int... I>
constexpr std::array<TileFn, sizeof...(I)> tiles_by_rows(std::integer_sequence<int, I...>) {
  return {{&tile<I + 1>...}};
}
// kTiles[R - 1] is the tile of R rows (constant-initialized: no code runs at load).
constexpr auto kTiles = tiles_by_rows(std::make_integer_sequence<int, kMaxTileRows>{});

template <Activation kAct>
void finish(const float* acc, std::int64_t rows, const float* bias, std::int64_t cols,
            bool accumulate, float* y, std::int64_t ldy) {
  const __mmask16 m_lo = vec::lane_mask(cols), m_hi = vec::lane_mask(cols - 16);
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

}  // namespace

TileFn tile_of_rows(int rows) { return kTiles[static_cast<std::size_t>(rows - 1)]; }

FinishFn finish_of(Activation act) {
  FinishFn fn = nullptr;
  vec::with_activation(act, [&](auto kind) { fn = &finish<decltype(kind)::value>; });
  return fn;
}

}  // namespace onepass::kernels::avx512

#endif  // __AVX512F__
