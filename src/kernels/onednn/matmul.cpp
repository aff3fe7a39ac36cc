// oneDNN side of kernels/matmul.h. One CPU engine for the process; matmul primitives with a
// runtime row count (DNNL_RUNTIME_DIM_VAL), so a ragged batch of any total length reuses the
// primitive made at load. The weight is described as [in, out] with strides (1, in): that is
// PyTorch's [out, in] row-major buffer read in place, no transposed copy.
#include <dnnl.h>

#include <map>
#include <memory>
#include <unordered_map>
#include <mutex>
#include <oneapi/dnnl/dnnl.hpp>
#include <string>
#include <tuple>

#include "base/error.h"
#include "kernels/matmul.h"

namespace onepass::kernels {
namespace {

using dnnl::memory;
using tag = memory::format_tag;
using dt = memory::data_type;

dnnl::engine& cpu_engine() {
  static dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  return engine;
}

// Streams are cheap but not free; one per thread, created on that thread's first product.
dnnl::stream& thread_stream() {
  thread_local dnnl::stream stream(cpu_engine());
  return stream;
}

dnnl::algorithm eltwise_algorithm(Activation act, float& alpha) {
  alpha = 0.0f;
  switch (act) {
    case Activation::kGeluErf: return dnnl::algorithm::eltwise_gelu_erf;
    case Activation::kGeluTanh: return dnnl::algorithm::eltwise_gelu_tanh;
    case Activation::kRelu: return dnnl::algorithm::eltwise_relu;
    case Activation::kTanh: return dnnl::algorithm::eltwise_tanh;
    case Activation::kSilu: alpha = 1.0f; return dnnl::algorithm::eltwise_swish;
    case Activation::kQuickGelu: alpha = 1.702f; return dnnl::algorithm::eltwise_swish;
    case Activation::kIdentity: break;
  }
  return dnnl::algorithm::undef;
}

// Shape class: everything a primitive depends on. Rows are a runtime dimension; ldx is fixed
// per call site (the fused QKV output is read with a wider stride).
using ShapeKey = std::tuple<std::int64_t, std::int64_t, std::int64_t, bool, int, bool>;

struct CachedPrimitive {
  dnnl::matmul primitive;
  memory::desc bias_md;
  memory::desc weight_md;
};

std::shared_ptr<const CachedPrimitive> get_primitive(std::int64_t in, std::int64_t out, std::int64_t ldx,
                                                     bool has_bias, Activation act, bool accumulate) {
  static std::mutex mutex;
  static std::map<ShapeKey, std::shared_ptr<const CachedPrimitive>> cache;
  const ShapeKey key{in, out, ldx, has_bias, static_cast<int>(act), accumulate};
  std::lock_guard<std::mutex> lock(mutex);
  if (auto it = cache.find(key); it != cache.end()) return it->second;

  const memory::dim rt = DNNL_RUNTIME_DIM_VAL;
  const memory::desc src_md({rt, in}, dt::f32, memory::dims{ldx, 1});
  const memory::desc weight_md({in, out}, dt::f32, memory::dims{1, in});
  const memory::desc bias_md = has_bias ? memory::desc({1, out}, dt::f32, tag::ab) : memory::desc();
  const memory::desc dst_md({rt, out}, dt::f32, memory::dims{out, 1});

  dnnl::post_ops ops;
  float alpha = 0.0f;
  const auto alg = eltwise_algorithm(act, alpha);
  if (alg != dnnl::algorithm::undef) ops.append_eltwise(1.0f, alg, alpha, 0.0f);
  if (accumulate) ops.append_sum(1.0f);
  dnnl::primitive_attr attr;
  attr.set_post_ops(ops);

  try {
    const dnnl::matmul::desc desc(src_md, weight_md, bias_md, dst_md);
    const dnnl::matmul::primitive_desc pd(desc, attr, cpu_engine());
    auto entry = std::make_shared<CachedPrimitive>(CachedPrimitive{dnnl::matmul(pd), bias_md, weight_md});
    cache.emplace(key, entry);
    return entry;
  } catch (const dnnl::error& e) {
    throw Error(ErrorKind::kInternal, std::string("oneDNN matmul creation failed: ") + e.what());
  }
}

}  // namespace

struct Linear::Impl {
  std::shared_ptr<const CachedPrimitive> plain;
  std::shared_ptr<const CachedPrimitive> accumulate;
  std::int64_t ldx = 0;
};

Linear::Linear() = default;
Linear::~Linear() = default;
Linear::Linear(Linear&&) noexcept = default;
Linear& Linear::operator=(Linear&&) noexcept = default;

Linear::Linear(const float* weight, const float* bias, std::int64_t out_features, std::int64_t in_features,
               Activation act, std::int64_t ldx)
    : impl_(std::make_unique<Impl>()), weight_(weight), bias_(bias), out_(out_features), in_(in_features),
      act_(act) {
  ONEPASS_CHECK(weight != nullptr && out_features > 0 && in_features > 0, "Linear needs a weight");
  impl_->ldx = ldx == 0 ? in_features : ldx;
  ONEPASS_CHECK(impl_->ldx >= in_features, "Linear input stride shorter than a row");
  impl_->plain = get_primitive(in_, out_, impl_->ldx, bias_ != nullptr, act_, false);
  impl_->accumulate = get_primitive(in_, out_, impl_->ldx, bias_ != nullptr, act_, true);
}

void Linear::forward(const float* x, std::int64_t rows, float* y, bool accumulate) const {
  ONEPASS_CHECK(impl_ != nullptr, "Linear used before construction");
  if (rows == 0) return;
  const std::int64_t ldx = impl_->ldx;
  const CachedPrimitive* p = accumulate ? impl_->accumulate.get() : impl_->plain.get();
  auto& engine = cpu_engine();
  const memory src(memory::desc({rows, in_}, dt::f32, memory::dims{ldx, 1}), engine, const_cast<float*>(x));
  const memory weights(p->weight_md, engine, const_cast<float*>(weight_));
  const memory dst(memory::desc({rows, out_}, dt::f32, memory::dims{out_, 1}), engine, y);
  std::unordered_map<int, memory> args{{DNNL_ARG_SRC, src}, {DNNL_ARG_WEIGHTS, weights}, {DNNL_ARG_DST, dst}};
  if (bias_ != nullptr) args.emplace(DNNL_ARG_BIAS, memory(p->bias_md, engine, const_cast<float*>(bias_)));
  auto& stream = thread_stream();
  p->primitive.execute(stream, args);
  stream.wait();
}

void gemm(bool trans_a, bool trans_b, std::int64_t m, std::int64_t n, std::int64_t k, float alpha,
          const float* a, std::int64_t lda, const float* b, std::int64_t ldb, float beta, float* c,
          std::int64_t ldc) {
  const dnnl_status_t status = dnnl_sgemm(trans_a ? 'T' : 'N', trans_b ? 'T' : 'N', m, n, k, alpha, a, lda,
                                          b, ldb, beta, c, ldc);
  ONEPASS_CHECK(status == dnnl_success, "dnnl_sgemm failed");
}

}  // namespace onepass::kernels
