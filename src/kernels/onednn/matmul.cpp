// oneDNN side of kernels/matmul.h. One CPU engine for the process. oneDNN 2.6 only picks its
// brgemm matmul (the fast one, and the only one that reads pre-packed weights) when the row
// count is known at creation: a primitive made with a runtime row count falls back to the jit
// gemm, 1.3-2.7x slower on these shapes (src/kernels/onednn/matmul_ceiling_bench.cpp). So
// primitives are cached per exact row count, with rows split into a bounded set of chunk sizes
// (next_chunk) so the cache stays small. The packed weight layout (fp32, bf16 or s8) does not
// depend on the row count, so one packed copy serves every primitive of a Linear.
#include "kernels/matmul.h"

#include <dnnl.h>
#include <omp.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <oneapi/dnnl/dnnl.hpp>
#include <string>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "base/error.h"
#include "base/huge_page_buffer.h"
#include "kernels/elementwise.h"
#include "kernels/packed_gemm.h"
#include "kernels/quantize.h"
#include "kernels/small_gemm.h"
#include "kernels/stream_gemm.h"

namespace onepass::kernels {
namespace {

using dnnl::memory;
using tag = memory::format_tag;
using dt = memory::data_type;

std::atomic<float> int8_scale_multiplier{1.0f};

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
    case Activation::kGeluErf:
      return dnnl::algorithm::eltwise_gelu_erf;
    case Activation::kGeluTanh:
      return dnnl::algorithm::eltwise_gelu_tanh;
    case Activation::kRelu:
      return dnnl::algorithm::eltwise_relu;
    case Activation::kTanh:
      return dnnl::algorithm::eltwise_tanh;
    case Activation::kSilu:
      alpha = 1.0f;
      return dnnl::algorithm::eltwise_swish;
    case Activation::kQuickGelu:
      alpha = 1.702f;
      return dnnl::algorithm::eltwise_swish;
    case Activation::kIdentity:
      break;
  }
  return dnnl::algorithm::undef;
}

// Row counts a primitive is made for: up to 128 rows exactly; above, chunks of a multiple of 32
// rows (at most 512), the remainder (< 32) going to an exact one. At most 140 sizes per class.
// A chunk never leaves a single row behind: on AMX CPUs oneDNN multiplies one bf16 row with
// another kernel than two or more, whose sums round differently, and a row must come out the
// same in every batch (Linear::forward pads a call of one row).
std::int64_t next_chunk(std::int64_t remaining) {
  const std::int64_t n =
      remaining <= 128 ? remaining : std::min<std::int64_t>(512, remaining / 32 * 32);
  return remaining - n == 1 ? n - 1 : n;
}

// Rows the int8 path quantizes, multiplies and dequantizes together (Linear::forward): 256 per
// thread of the team, at most 512, so that every chunk is one primitive (next_chunk's sizes).
std::int64_t int8_chunk_rows(int threads) {
  return std::min<std::int64_t>(512, 256 * std::max(1, threads));
}

// Everything a primitive depends on besides the weight layout, which follows from
// (src type, in, out): the blocked layout packed_weights_desc() returns.
struct ClassSpec {
  dt src = dt::f32;
  dt weights = dt::f32;
  dt dst = dt::f32;
  std::int64_t in = 0, out = 0, ld_src = 0;
  bool has_bias = false;
  Activation act = Activation::kIdentity;
  bool accumulate = false;
};

using PrimitiveKey =
    std::tuple<int, std::int64_t, std::int64_t, std::int64_t, bool, int, bool, std::int64_t, int>;

memory::desc src_desc(const ClassSpec& s, std::int64_t rows) {
  return memory::desc({rows, s.in}, s.src, memory::dims{s.ld_src, 1});
}
memory::desc dst_desc(const ClassSpec& s, std::int64_t rows) {
  return memory::desc({rows, s.out}, s.dst, tag::ab);
}
memory::desc bias_desc(const ClassSpec& s) {
  return s.has_bias ? memory::desc({1, s.out}, dt::f32, tag::ab) : memory::desc();
}

// The blocked weight layout oneDNN's brgemm wants for this (types, in, out); any row count gives
// the same answer.
memory::desc packed_weights_desc(const ClassSpec& s) {
  const memory::desc any({s.in, s.out}, s.weights, tag::any);
  const dnnl::matmul::primitive_desc pd(
      dnnl::matmul::desc(src_desc(s, 128), any, bias_desc(s), dst_desc(s, 128)), cpu_engine());
  return pd.weights_desc();
}

// The primitive for `rows` rows of this class on a team of omp_get_max_threads() threads
// (brgemm fixes its thread split at creation). Shared by every Linear of the class.
// A primitive and the scratchpad it needs. Scratchpads are user-managed (per calling thread,
// see run()): oneDNN's default library-managed scratchpad is shared between primitives, and
// forward() runs concurrently on several threads.
struct CachedMatmul {
  dnnl::matmul primitive;
  memory::desc scratchpad;
};

const CachedMatmul& primitive_for(const ClassSpec& s, const memory::desc& weights_md,
                                  std::int64_t rows) {
  static std::mutex mutex;
  static std::map<PrimitiveKey, std::unique_ptr<CachedMatmul>> cache;
  const int threads = omp_get_max_threads();
  const PrimitiveKey key{static_cast<int>(s.src), s.in,         s.out, s.ld_src, s.has_bias,
                         static_cast<int>(s.act), s.accumulate, rows,  threads};
  std::lock_guard<std::mutex> lock(mutex);
  if (auto it = cache.find(key); it != cache.end()) return *it->second;

  dnnl::post_ops ops;
  float alpha = 0.0f;
  const auto alg = eltwise_algorithm(s.act, alpha);
  if (alg != dnnl::algorithm::undef) ops.append_eltwise(1.0f, alg, alpha, 0.0f);
  if (s.accumulate) ops.append_sum(1.0f);
  dnnl::primitive_attr attr;
  attr.set_post_ops(ops);
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  try {
    const dnnl::matmul::desc desc(src_desc(s, rows), weights_md, bias_desc(s), dst_desc(s, rows));
    const dnnl::matmul::primitive_desc pd(desc, attr, cpu_engine());
    auto& slot = cache[key];
    slot = std::make_unique<CachedMatmul>(CachedMatmul{dnnl::matmul(pd), pd.scratchpad_desc()});
    return *slot;
  } catch (const dnnl::error& e) {
    throw Error(ErrorKind::kInternal, std::string("oneDNN matmul creation failed: ") + e.what());
  }
}

// Per-thread conversion buffers of the bf16 / int8 paths; they grow to the largest batch this
// thread has run and are then reused (no allocation in steady state).
template <typename T>
T* thread_buffer(std::vector<T>& buffer, std::int64_t n) {
  if (static_cast<std::int64_t>(buffer.size()) < n) buffer.resize(static_cast<std::size_t>(n));
  return buffer.data();
}

struct ThreadBuffers {
  std::vector<std::uint16_t> bf16;
  std::vector<float> bf16_one_row_out;  // bf16, a call of one row: two rows out (next_chunk)
  std::vector<std::uint8_t> u8;
  std::vector<float> row_scales;
  std::vector<std::int32_t> zero_points;
  std::vector<std::int32_t> acc;
  std::vector<std::uint8_t> scratchpad;
};

ThreadBuffers& thread_buffers() {
  thread_local ThreadBuffers buffers;
  return buffers;
}

}  // namespace

namespace {
dnnl_cpu_isa_t effective_isa() {
  static const dnnl_cpu_isa_t isa = dnnl_get_effective_cpu_isa();
  return isa;
}
bool isa_has(dnnl_cpu_isa_t isa) { return (effective_isa() & isa) == isa; }
}  // namespace

// fp32 products: on kernels/stream_gemm.h where the CPU has AVX-512 (faster than brgemm when
// the weights stream from memory). oneDNN 2.6's brgemm matmul (row-count-stable, see the file
// comment) needs AVX-512; below it fp32 products run on kernels/packed_gemm.h instead of
// oneDNN's jit sgemm. brgemm remains for a compiler that cannot target AVX-512. Both choices
// follow oneDNN's effective ISA, so ONEDNN_MAX_CPU_ISA=AVX2 (set against AVX-512's frequency
// drop on some Xeons, or to measure the AVX2 path) keeps AVX-512 out of every product.
bool use_stream_gemm() { return has_stream_gemm() && isa_has(dnnl_cpu_isa_avx512_core); }
bool use_packed_gemm() { return has_packed_gemm() && !isa_has(dnnl_cpu_isa_avx512_core); }

const char* fp32_linear_kernel() {
  if (use_stream_gemm()) return "stream_gemm";
  if (use_packed_gemm()) return "packed_gemm";
  return "onednn";
}

bool cpu_has_bf16_matmul() {
  return isa_has(dnnl_cpu_isa_avx512_core_bf16) || isa_has(dnnl_cpu_isa_avx512_core_amx);
}

// int8 with VNNI: AVX512-VNNI (oneDNN's brgemm matmul, vpdpbusd on zmm) or AVX-VNNI without
// AVX-512 (Alder Lake and later cores: oneDNN 2.6 has no brgemm there; its matmul runs the jit
// gemm_s8u8s32, whose AVX2 kernel uses VEX vpdpbusd when the effective ISA is avx2_vnni). Either
// way each u8 x s8 product is summed exactly in 32 bits, as the int16 packed_gemm.h path sums it,
// so the three give the same integers. dnnl_cpu_isa_avx2_vnni (0x407) is not a subset of the
// AVX-512 ISAs' masks: an AVX-512 CPU that also has AVX-VNNI (Sapphire Rapids) reports its AVX-512
// ISA and takes the first path; ONEDNN_MAX_CPU_ISA=AVX2_VNNI holds it to the second.
// Not run on hardware: the AVX-VNNI path was written and checked on an AMD Zen 4, which has
// AVX512-VNNI but no AVX-VNNI (there ONEDNN_MAX_CPU_ISA=AVX2_VNNI leaves oneDNN at avx2, and
// int8 on packed_gemm.h's int16 products: InfoCli.OnednnHeldToAvx2VnniWithoutItStaysExact).
bool cpu_has_int8_vnni() {
  return isa_has(dnnl_cpu_isa_avx512_core_vnni) || isa_has(dnnl_cpu_isa_avx2_vnni);
}

bool onednn_isa_has_avx512() { return isa_has(dnnl_cpu_isa_avx512_core); }
bool onednn_isa_has_avx512_bf16() { return isa_has(dnnl_cpu_isa_avx512_core_bf16); }

// Without VNNI oneDNN's u8 x s8 products saturate (packed_gemm.h): int8 runs there instead.
bool use_packed_int8() { return has_packed_gemm() && !cpu_has_int8_vnni(); }

const char* int8_linear_kernel() { return testing::int8_linear_kernel_for(effective_isa()); }

const char* bf16_linear_kernel() { return cpu_has_bf16_matmul() ? "onednn" : "unsupported"; }

const char* precision_unsupported_reason(Precision precision) {
  if (precision == Precision::kBf16 && !cpu_has_bf16_matmul())
    return "bf16 precision needs AVX512_BF16 (or AMX); this CPU has neither (use fp32 or int8)";
  return "";
}

namespace testing {
const char* int8_linear_kernel_for(unsigned onednn_isa) {
  const auto has = [onednn_isa](dnnl_cpu_isa_t isa) {
    return (onednn_isa & static_cast<unsigned>(isa)) == static_cast<unsigned>(isa);
  };
  // The names go into the verdict key (runtime/precision_verdicts.h): each names the code that
  // computes the products, so a verdict made on one is never read on another.
  if (has(dnnl_cpu_isa_avx512_core_vnni)) return "onednn_vnni";
  if (has(dnnl_cpu_isa_avx2_vnni)) return "onednn_avx2_vnni";
  return has_packed_gemm() ? "packed_gemm" : "onednn";
}

void set_int8_weight_scale_multiplier(float multiplier) { int8_scale_multiplier.store(multiplier); }
}  // namespace testing

struct Linear::Impl {
  ClassSpec plain;       // y = act(x·Wᵀ + b)
  ClassSpec accumulate;  // y += act(x·Wᵀ + b)
  memory::desc weights_md;
  HugePageBuffer packed_bytes;          // packed's storage (huge_page_buffer.h says why)
  memory packed;                        // the weights (fp32, bf16 or s8) in weights_md's layout
  std::vector<float> col_scales;        // int8: per output channel
  std::vector<std::int32_t> col_sums;   // int8: Σk q[c, k]
  std::vector<std::int32_t> panels_s8;  // int8 without VNNI: packed_gemm.h's layout
  std::vector<float> panels;            // fp32 without AVX-512: packed_gemm.h's layout
  HugePageBuffer stream_panels;         // fp32 with AVX-512: stream_gemm.h's layout

  void allocate_packed() {
    packed_bytes = HugePageBuffer(weights_md.get_size());
    packed = memory(weights_md, cpu_engine(), packed_bytes.data());
  }

  // Runs rows in primitive-sized chunks; src / dst advance by their own row strides.
  void run(const ClassSpec& s, const void* src, std::size_t src_row_bytes, std::int64_t rows,
           void* dst, std::size_t dst_row_bytes, const float* bias, const void* weights) const {
    auto& engine = cpu_engine();
    auto& stream = thread_stream();
    const memory w(weights_md, engine, const_cast<void*>(weights));
    for (std::int64_t done = 0; done < rows;) {
      const std::int64_t n = next_chunk(rows - done);
      const CachedMatmul& prim = primitive_for(s, weights_md, n);
      const memory in(src_desc(s, n), engine,
                      const_cast<char*>(static_cast<const char*>(src) + done * src_row_bytes));
      const memory out(dst_desc(s, n), engine, static_cast<char*>(dst) + done * dst_row_bytes);
      std::unordered_map<int, memory> args{
          {DNNL_ARG_SRC, in}, {DNNL_ARG_WEIGHTS, w}, {DNNL_ARG_DST, out}};
      if (s.has_bias)
        args.emplace(DNNL_ARG_BIAS, memory(bias_desc(s), engine, const_cast<float*>(bias)));
      if (const std::size_t bytes = prim.scratchpad.get_size(); bytes > 0) {
        // 64-byte aligned start inside this thread's growing buffer.
        auto* raw =
            thread_buffer(thread_buffers().scratchpad, static_cast<std::int64_t>(bytes + 64));
        auto* pad = raw + (64 - reinterpret_cast<std::uintptr_t>(raw) % 64) % 64;
        args.emplace(DNNL_ARG_SCRATCHPAD, memory(prim.scratchpad, engine, pad));
      }
      prim.primitive.execute(stream, args);
      done += n;
    }
    stream.wait();
  }
};

Linear::Linear() = default;
Linear::~Linear() = default;
Linear::Linear(Linear&&) noexcept = default;
Linear& Linear::operator=(Linear&&) noexcept = default;

Linear::Linear(const float* weight, const float* bias, std::int64_t out_features,
               std::int64_t in_features, Activation act, std::int64_t ldx, Precision precision)
    : impl_(std::make_unique<Impl>()),
      bias_(bias),
      out_(out_features),
      in_(in_features),
      act_(act),
      precision_(precision) {
  ONEPASS_CHECK(weight != nullptr && out_features > 0 && in_features > 0, "Linear needs a weight");
  ldx = ldx == 0 ? in_features : ldx;
  ONEPASS_CHECK(ldx >= in_features, "Linear input stride shorter than a row");
  ldx_ = ldx;
  if (const char* reason = precision_unsupported_reason(precision_); *reason != '\0')
    throw Error(ErrorKind::kUnsupported, reason);
  ClassSpec s;
  s.in = in_;
  s.out = out_;
  s.has_bias = bias_ != nullptr;
  s.act = act_;
  auto& engine = cpu_engine();
  auto& stream = thread_stream();
  try {
    switch (precision_) {
      case Precision::kFp32: {
        if (use_stream_gemm()) {
          impl_->stream_panels = pack_stream_panels(weight, out_, in_);
          return;  // no oneDNN primitive
        }
        if (use_packed_gemm()) {
          impl_->panels = pack_panels(weight, out_, in_);
          return;  // no oneDNN primitive
        }
        // Packed once into brgemm's blocked layout: read in place ([out, in]), brgemm repacks
        // weight blocks on every call, which costs ~20% at one short request (kernels_bench).
        s.ld_src = ldx;
        impl_->weights_md = packed_weights_desc(s);
        memory source({{in_, out_}, dt::f32, tag::ba}, engine, const_cast<float*>(weight));
        impl_->allocate_packed();
        dnnl::reorder(source, impl_->packed).execute(stream, source, impl_->packed);
        stream.wait();
        break;
      }
      case Precision::kBf16: {
        s.src = s.weights = dt::bf16;
        s.ld_src = in_;  // the converted copy is contiguous
        impl_->weights_md = packed_weights_desc(s);
        std::vector<std::uint16_t> plain(static_cast<std::size_t>(out_ * in_));
        convert_rows_to_bf16(weight, out_, in_, in_, plain.data());
        memory source({{in_, out_}, dt::bf16, tag::ba}, engine, plain.data());
        impl_->allocate_packed();
        dnnl::reorder(source, impl_->packed).execute(stream, source, impl_->packed);
        stream.wait();
        break;
      }
      case Precision::kInt8: {
        // s32 out of oneDNN; scales, zero-point correction, bias, activation and residual in
        // dequantize_rows' single pass (oneDNN 2.6 has no per-row scale on the product).
        s.src = dt::u8;
        s.weights = dt::s8;
        s.dst = dt::s32;
        s.ld_src = in_;
        s.has_bias = false;
        s.act = Activation::kIdentity;
        std::vector<std::int8_t> q(static_cast<std::size_t>(out_ * in_));
        impl_->col_scales.resize(static_cast<std::size_t>(out_));
        impl_->col_sums.resize(static_cast<std::size_t>(out_));
        quantize_weights_s8(weight, out_, in_, int8_scale_multiplier.load(), q.data(),
                            impl_->col_scales.data(), impl_->col_sums.data());
        if (use_packed_int8()) {
          impl_->panels_s8 = pack_panels_s8(q.data(), out_, in_);
          return;  // no oneDNN primitive
        }
        impl_->weights_md = packed_weights_desc(s);
        memory source({{in_, out_}, dt::s8, tag::ba}, engine, q.data());
        impl_->allocate_packed();
        dnnl::reorder(source, impl_->packed).execute(stream, source, impl_->packed);
        stream.wait();
        break;
      }
    }
  } catch (const dnnl::error& e) {
    throw Error(ErrorKind::kInternal, std::string("oneDNN weight packing failed: ") + e.what());
  }
  impl_->plain = s;
  impl_->accumulate = s;
  if (precision_ != Precision::kInt8) impl_->accumulate.accumulate = true;
  // Primitives for a single row and the longest chunk up front: the cache then holds this
  // class before the first request.
  for (const ClassSpec* spec : {&impl_->plain, &impl_->accumulate}) {
    primitive_for(*spec, impl_->weights_md, 1);
    primitive_for(*spec, impl_->weights_md, 512);
  }
}

void Linear::forward(const float* x, std::int64_t rows, float* y, bool accumulate) const {
  ONEPASS_CHECK(impl_ != nullptr, "Linear used before construction");
  if (rows == 0) return;
  const Impl& m = *impl_;
  const ClassSpec& s = accumulate ? m.accumulate : m.plain;
  const std::size_t dst_row_bytes = static_cast<std::size_t>(out_) * sizeof(float);
  switch (precision_) {
    case Precision::kFp32:
      if (m.stream_panels.data() != nullptr) {
        stream_linear(x, rows, ldx_, static_cast<const float*>(m.stream_panels.data()), in_, out_,
                      bias_, act_, accumulate, y);
        return;
      }
      if (!m.panels.empty()) {
        packed_linear(x, rows, ldx_, m.panels.data(), in_, out_, bias_, act_, accumulate, y);
        return;
      }
      m.run(s, x, static_cast<std::size_t>(ldx_) * sizeof(float), rows, y, dst_row_bytes, bias_,
            m.packed.get_data_handle());
      return;
    case Precision::kBf16: {
      // One row runs as two (a zero row added), so that it takes the kernel every larger call
      // takes (next_chunk).
      const std::int64_t padded = std::max<std::int64_t>(rows, 2);
      ThreadBuffers& b = thread_buffers();
      std::uint16_t* xb = thread_buffer(b.bf16, padded * in_);
      convert_rows_to_bf16(x, rows, in_, ldx_, xb);
      const std::size_t xb_row_bytes = static_cast<std::size_t>(in_) * sizeof(std::uint16_t);
      if (padded == rows) {
        m.run(s, xb, xb_row_bytes, rows, y, dst_row_bytes, bias_, m.packed.get_data_handle());
        return;
      }
      std::fill(xb + in_, xb + padded * in_, std::uint16_t{0});
      float* staged = thread_buffer(b.bf16_one_row_out, padded * out_);
      std::copy(y, y + out_, staged);  // the residual, when accumulating
      m.run(s, xb, xb_row_bytes, padded, staged, dst_row_bytes, bias_, m.packed.get_data_handle());
      std::copy(staged, staged + out_, y);
      return;
    }
    case Precision::kInt8: {
      // Quantize, multiply and dequantize a chunk of rows at a time, so that the epilogue reads
      // the chunk's s32 products back from cache rather than a whole batch's from memory
      // (mDeBERTa-base, 32 x 64 tokens: 1 thread, 128-row chunks 7% faster than whole batches
      // and 256 rows 5%; 2 threads, 512 rows 4% faster and 128 rows 3% slower).
      const std::int64_t chunk_rows = int8_chunk_rows(omp_get_max_threads());
      const std::int64_t most = std::min(rows, chunk_rows);
      ThreadBuffers& b = thread_buffers();
      std::uint8_t* xq = thread_buffer(b.u8, most * in_);
      float* row_scales = thread_buffer(b.row_scales, most);
      std::int32_t* zero_points = thread_buffer(b.zero_points, most);
      std::int32_t* acc = thread_buffer(b.acc, most * out_);
      for (std::int64_t done = 0; done < rows;) {
        const std::int64_t n = std::min(chunk_rows, rows - done);
        quantize_rows_u8(x + done * ldx_, n, in_, ldx_, xq, row_scales, zero_points);
        if (!m.panels_s8.empty()) {
          packed_gemm_u8s8(xq, n, in_, m.panels_s8.data(), out_, acc);
        } else {
          m.run(s, xq, static_cast<std::size_t>(in_), n, acc,
                static_cast<std::size_t>(out_) * sizeof(std::int32_t), nullptr,
                m.packed.get_data_handle());
        }
        dequantize_rows(acc, n, out_, row_scales, zero_points, m.col_scales.data(),
                        m.col_sums.data(), bias_, act_, y + done * out_, accumulate);
        done += n;
      }
      return;
    }
  }
}

void gemm(bool trans_a, bool trans_b, std::int64_t m, std::int64_t n, std::int64_t k, float alpha,
          const float* a, std::int64_t lda, const float* b, std::int64_t ldb, float beta, float* c,
          std::int64_t ldc) {
  // Attention's products up to ~128 tokens (no transposed A, C overwritten) take the
  // register-blocked kernel: 5-25% faster than dnnl_sgemm there, 10-20% slower at 512 tokens
  // (kernels_bench small_gemm vs dnnl_sgemm).
  constexpr std::int64_t kSmallGemmMaxOutputs = 128 * 256;
  if (!trans_a && beta == 0.0f && m * n <= kSmallGemmMaxOutputs &&
      small_gemm(trans_b, m, n, k, alpha, a, lda, b, ldb, c, ldc))
    return;
  const dnnl_status_t status = dnnl_sgemm(trans_a ? 'T' : 'N', trans_b ? 'T' : 'N', m, n, k, alpha,
                                          a, lda, b, ldb, beta, c, ldc);
  ONEPASS_CHECK(status == dnnl_success, "dnnl_sgemm failed");
}

}  // namespace onepass::kernels
