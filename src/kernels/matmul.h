// Dense products on oneDNN (the implementation lives in onednn/, the only folder that includes
// oneDNN headers).
//
// Linear is one nn.Linear: y[rows, out] = act(x[rows, in] · Wᵀ + b) (+ y when accumulating, the
// residual add fused into the product). W is PyTorch's [out, in] row-major weight, used in
// place (e.g. straight from the safetensors mapping); it must outlive the Linear. The oneDNN
// matmul primitive has a runtime row count and is created at construction and shared by every
// Linear with the same (in, out, act, accumulate) — the "shape class" — so forward() never
// creates a primitive. forward() is const and thread-safe; it runs on the calling thread's
// OpenMP team (omp_set_num_threads decides its size).
#pragma once

#include <cstdint>
#include <memory>

#include "kernels/activation.h"

namespace onepass::kernels {

class Linear {
 public:
  Linear();
  // weight: [out_features, in_features]; bias: [out_features] or null. ldx: row stride of the
  // inputs this Linear will read (0: in_features, i.e. contiguous rows).
  Linear(const float* weight, const float* bias, std::int64_t out_features, std::int64_t in_features,
         Activation act = Activation::kIdentity, std::int64_t ldx = 0);
  ~Linear();
  Linear(Linear&&) noexcept;
  Linear& operator=(Linear&&) noexcept;

  // x: [rows, in_features] with the row stride given at construction; y: [rows, out_features]
  // contiguous. accumulate: y += act(x·Wᵀ + b) instead of y = ....
  void forward(const float* x, std::int64_t rows, float* y, bool accumulate = false) const;

  std::int64_t in_features() const { return in_; }
  std::int64_t out_features() const { return out_; }
  const float* weight() const { return weight_; }
  const float* bias() const { return bias_; }
  Activation activation() const { return act_; }

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  const float* weight_ = nullptr;
  const float* bias_ = nullptr;
  std::int64_t out_ = 0;
  std::int64_t in_ = 0;
  Activation act_ = Activation::kIdentity;
};

// Row-major single-precision GEMM: C[M,N] = alpha · op(A) · op(B) + beta · C, op = transpose when
// the flag is set; lda/ldb/ldc are row strides. For the small per-sequence, per-head products of
// attention: no primitive, no allocation. Inside an OpenMP parallel region it runs on the
// calling thread alone.
void gemm(bool trans_a, bool trans_b, std::int64_t m, std::int64_t n, std::int64_t k, float alpha,
          const float* a, std::int64_t lda, const float* b, std::int64_t ldb, float beta, float* c,
          std::int64_t ldc);

}  // namespace onepass::kernels
