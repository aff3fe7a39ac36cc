// Dense products, on oneDNN or the kernels below (the implementation lives in onednn/, the only
// folder that includes oneDNN headers).
//
// Linear is one nn.Linear: y[rows, out] = act(x·Wᵀ + b) (+ y when accumulating, the residual add
// fused into the product). W is PyTorch's [out, in] row-major weight, read only by the
// constructor, which packs it once into oneDNN's blocked layout (brgemm otherwise repacks weight
// blocks on every call); the bias must outlive the Linear. Input, output, bias and activation
// are fp32 in every precision:
//   kFp32  W packed as fp32: on kernels/stream_gemm.h on an AVX-512 CPU, in a portable build
//          too (faster than oneDNN's brgemm when the weights come from memory), on
//          kernels/packed_gemm.h on an AVX2 CPU;
//   kBf16  W converted to bf16 and packed; x converted per call; AVX512-BF16 products with fp32
//          accumulation (the constructor throws kUnsupported on a CPU without AVX512_BF16/AMX);
//   kInt8  W quantized once per output channel to s8 and packed, x quantized per token to u8 on
//          each call (VNNI u8 x s8 products, s32 accumulation; without VNNI, exact int16
//          products in kernels/packed_gemm.h), see kernels/quantize.h.
// oneDNN's fastest matmul (brgemm) needs the row count at creation, so primitives are made for
// exact row counts (up to 128 rows; larger batches run in chunks of multiples of 32 rows, at
// most 512, plus a tail), shared by every Linear with the same shape class and team size, and
// created on first use (about 0.5 ms each). forward() is const and thread-safe; it runs on the
// calling thread's OpenMP team (omp_set_num_threads decides its size). The bf16/int8 paths
// keep per-thread conversion buffers that grow to the largest batch seen, then stay.
#pragma once

#include <cstdint>
#include <memory>

#include "kernels/activation.h"
#include "kernels/precision.h"

namespace onepass::kernels {

// What this CPU can run, from oneDNN's run-time ISA query (not from the build's flags).
// bf16 needs AVX512_BF16 or AMX: elsewhere oneDNN has no bf16 matmul. int8 runs everywhere: on
// oneDNN with VNNI (AVX512_VNNI and later, or AVX-VNNI without AVX-512), on
// kernels/packed_gemm.h's exact int16 products without it (oneDNN's u8 x s8 products saturate
// there).
bool cpu_has_bf16_matmul();
bool cpu_has_int8_vnni();
// Whether oneDNN's effective ISA (the CPU's, capped by ONEDNN_MAX_CPU_ISA) has AVX-512
// (avx512_core), and its BF16 extension. The kernels compiled apart for AVX-512 follow it too
// (dispatch.h): ONEDNN_MAX_CPU_ISA=AVX2 keeps a portable build off AVX-512 altogether.
bool onednn_isa_has_avx512();
bool onednn_isa_has_avx512_bf16();
// Empty when this CPU runs `precision`; otherwise the reason, naming the missing feature.
const char* precision_unsupported_reason(Precision precision);
// Which kernel runs fp32 Linear products on this CPU in this build: "stream_gemm" (AVX-512),
// "packed_gemm" (AVX2) or "onednn" (oneDNN's brgemm or jit sgemm). Logged at start-up.
const char* fp32_linear_kernel();
// The same for int8: "onednn_vnni" (AVX512-VNNI), "onednn_avx2_vnni" (AVX-VNNI without
// AVX-512), "packed_gemm" (no VNNI) or "onednn" (no VNNI, no packed_gemm build); and bf16:
// "onednn" or "unsupported" (precision_unsupported_reason says why).
const char* int8_linear_kernel();
const char* bf16_linear_kernel();

class Linear {
 public:
  Linear();
  // weight: [out_features, in_features]; bias: [out_features] or null. ldx: row stride of the
  // inputs this Linear will read (0: in_features, i.e. contiguous rows).
  Linear(const float* weight, const float* bias, std::int64_t out_features,
         std::int64_t in_features, Activation act = Activation::kIdentity, std::int64_t ldx = 0,
         Precision precision = Precision::kFp32);
  ~Linear();
  Linear(Linear&&) noexcept;
  Linear& operator=(Linear&&) noexcept;

  // x: [rows, in_features] with the row stride given at construction; y: [rows, out_features]
  // contiguous. accumulate: y += act(x·Wᵀ + b) instead of y = ....
  void forward(const float* x, std::int64_t rows, float* y, bool accumulate = false) const;

  std::int64_t in_features() const { return in_; }
  std::int64_t out_features() const { return out_; }
  const float* bias() const { return bias_; }
  Activation activation() const { return act_; }
  Precision precision() const { return precision_; }

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  const float* bias_ = nullptr;
  std::int64_t out_ = 0;
  std::int64_t in_ = 0;
  std::int64_t ldx_ = 0;
  Activation act_ = Activation::kIdentity;
  Precision precision_ = Precision::kFp32;
};

namespace testing {
// int8_linear_kernel() for a oneDNN effective ISA (a dnnl_cpu_isa_t value), so that the choice
// for CPUs this machine is not can be checked here.
const char* int8_linear_kernel_for(unsigned onednn_isa);
// Multiplies the int8 weight scales of every Linear constructed afterwards (1 restores the
// correct scale). Only for tests that prove the accuracy gate rejects a broken quantization.
void set_int8_weight_scale_multiplier(float multiplier);
}  // namespace testing

// Row-major single-precision GEMM: C[M,N] = alpha · op(A) · op(B) + beta · C, op = transpose when
// the flag is set; lda/ldb/ldc are row strides. For the small per-sequence, per-head products of
// attention: no primitive, no allocation. Inside an OpenMP parallel region it runs on the
// calling thread alone.
void gemm(bool trans_a, bool trans_b, std::int64_t m, std::int64_t n, std::int64_t k, float alpha,
          const float* a, std::int64_t lda, const float* b, std::int64_t ldb, float beta, float* c,
          std::int64_t ldc);

}  // namespace onepass::kernels
