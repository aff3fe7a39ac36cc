// Conversions around the reduced-precision matrix products (kernels::Linear with
// Precision kBf16 / kInt8): fp32 activations to bf16 or to per-token u8, fp32 weights to
// per-output-channel s8, and the int8 product's s32 accumulators back to fp32.
//
// Quantization scheme (what the int8 Linear computes):
//   activations, per row r (token): asymmetric u8, q = clamp(round(x / sa[r]) + za[r], 0, 255) with
//     [min(x, 0), max(x, 0)] mapped onto [0, 255], so 0 is exact (the range always holds zero);
//   weights, per output channel c: symmetric s8, q = clamp(round(w / sw[c]), -127, 127),
//     sw[c] = max|w[c, :]| / 127;
//   y[r, c] = sa[r] · sw[c] · (Σk qa[r,k]·qw[c,k] − za[r] · Σk qw[c,k]) + b[c].
// u8 × s8 is the operand order of the VNNI dot-product instruction (vpdpbusd), so oneDNN runs it
// without its own compensation pass. Every function is row-parallel (OpenMP) and allocation-free,
// compiled once per instruction set and chosen at run time (dispatch.h).
#pragma once

#include <cstdint>
#include <cstring>

#include "kernels/activation.h"

namespace onepass::kernels {

// out[r, c] = bf16(x[r * ldx + c]), round to nearest even; out is contiguous [rows, cols].
void convert_rows_to_bf16(const float* x, std::int64_t rows, std::int64_t cols, std::int64_t ldx,
                          std::uint16_t* out);
inline float bf16_to_float(std::uint16_t bits) {
  const std::uint32_t wide = static_cast<std::uint32_t>(bits) << 16;
  float f = 0.0f;
  std::memcpy(&f, &wide, sizeof f);
  return f;
}

// Per-row asymmetric u8 quantization of x[rows, cols] (row stride ldx) into q (contiguous);
// scales[r] and zero_points[r] as in the scheme above. A row of zeros gets scale 1, zero point 0.
void quantize_rows_u8(const float* x, std::int64_t rows, std::int64_t cols, std::int64_t ldx,
                      std::uint8_t* q, float* scales, std::int32_t* zero_points);

// Per-output-channel symmetric s8 quantization of w[out, in] (PyTorch layout) into q[out, in];
// scales[c] = max|w[c, :]| / 127 × scale_multiplier (1 in production; tests pass a wrong one to
// prove the accuracy gate catches it); col_sums[c] = Σk q[c, k] (the zero-point correction).
void quantize_weights_s8(const float* w, std::int64_t out, std::int64_t in, float scale_multiplier,
                         std::int8_t* q, float* scales, std::int32_t* col_sums);

// The int8 Linear's whole epilogue in one pass:
// y[r, c] (+)= act(sa[r] · sw[c] · (acc[r, c] − za[r] · col_sums[c]) + bias[c]) (bias may be
// null; with accumulate the activation comes before the residual add, as in nn.Linear + add).
// acc and y are contiguous [rows, cols] and distinct.
void dequantize_rows(const std::int32_t* acc, std::int64_t rows, std::int64_t cols,
                     const float* row_scales, const std::int32_t* zero_points,
                     const float* col_scales, const std::int32_t* col_sums, const float* bias,
                     Activation act, float* y, bool accumulate);

}  // namespace onepass::kernels
