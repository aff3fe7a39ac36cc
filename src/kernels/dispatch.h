// The kernels compiled once per instruction set, and the run-time choice between them.
//
// A build targets one baseline (-march; x86-64-v3 unless the flags name another). The files with
// the hot row and attention kernels (elementwise.cpp, small_gemm.cpp, small_gemm_bf16.cpp,
// quantize.cpp) are compiled for it and, where the baseline lacks them, once more per
// instruction set above it: AVX-512 (the x86-64-v4 set) and AVX-512 with BF16 (which file gets
// which: src/kernels/CMakeLists.txt). Each compilation puts its code in its own namespace,
// onepass::kernels::ONEPASS_ISA (baseline, avx512, avx512_bf16), and ends with a table of its
// entry points. The public functions (elementwise.h, small_gemm.h, small_gemm_bf16.h,
// quantize.h) call through the table of the best compilation this CPU runs, chosen once
// (dispatch.cpp). A build whose baseline has AVX-512 (-march=native on such a CPU) compiles each
// file once: nothing to choose.
//
// Nothing compiled for AVX-512 may run before the CPU check, so those compilations keep every
// function in their namespace. An inline function or template instantiated there outside it
// (std::vector's members, say) could be the copy the linker keeps for the baseline's callers, and
// a static initializer there runs at start-up on any CPU: these files take their per-thread
// buffers from thread_scratch.h and hold no object with a constructor. scripts/check-isa.sh
// checks the binary and the AVX-512 objects for both (the isa_check test).
#pragma once

#include <string>
#include <vector>

#include "kernels/elementwise.h"
#include "kernels/quantize.h"
#include "kernels/small_gemm.h"
#include "kernels/small_gemm_bf16.h"

// The namespace of this compilation's kernels: CMake defines it for the compilations above the
// baseline.
#if !defined(ONEPASS_ISA)
#define ONEPASS_ISA baseline
#endif

namespace onepass::kernels {

// The compilations a dispatched kernel can have, lowest first.
enum class Isa { kBaseline, kAvx512, kAvx512Bf16 };

// "baseline", "avx512", "avx512_bf16".
const char* isa_name(Isa isa);

// Whether this CPU (and its OS, which must save the AVX-512 registers) runs code compiled for
// isa, and oneDNN's ISA limit allows it (ONEDNN_MAX_CPU_ISA=AVX2 keeps every product and kernel
// off AVX-512, matmul.h); kBaseline: always. Checked once.
bool cpu_supports(Isa isa);

// The entry points of one compilation of each file. `path` names the instructions its code
// uses: "avx512_bf16", "avx512", "avx2", "scalar", or "none" (small_gemm_bf16.cpp without
// AVX512-BF16, whose functions then return false).
struct ElementwiseKernels {
  const char* path;
  decltype(&kernels::layer_norm) layer_norm;
  decltype(&kernels::activate) activate;
  decltype(&kernels::multiply) multiply;
  decltype(&kernels::softmax_rows) softmax_rows;
  decltype(&kernels::softmax_row) softmax_row;
  decltype(&kernels::embedding_gather) embedding_gather;
  decltype(&kernels::gather_row) gather_row;
};

struct SmallGemmKernels {
  const char* path;
  decltype(&kernels::small_gemm) small_gemm;
};

struct Bf16GemmKernels {
  const char* path;
  decltype(&kernels::has_bf16_gemm) has_bf16_gemm;
  decltype(&kernels::pack_bf16_pairs) pack_bf16_pairs;
  decltype(&kernels::pack_bf16_pairs_transposed) pack_bf16_pairs_transposed;
  decltype(&kernels::small_gemm_bf16) small_gemm_bf16;
  decltype(&kernels::gemm_bf16) gemm_bf16;
};

struct QuantizeKernels {
  const char* path;
  decltype(&kernels::convert_rows_to_bf16) convert_rows_to_bf16;
  decltype(&kernels::quantize_rows_u8) quantize_rows_u8;
  decltype(&kernels::quantize_weights_s8) quantize_weights_s8;
  decltype(&kernels::dequantize_rows) dequantize_rows;
};

// Each compilation defines the tables of the files it compiles (constant-initialized: no code
// runs at load); dispatch.cpp refers only to those CMake made.
namespace baseline {
extern const ElementwiseKernels kElementwiseKernels;
extern const SmallGemmKernels kSmallGemmKernels;
extern const Bf16GemmKernels kBf16GemmKernels;
extern const QuantizeKernels kQuantizeKernels;
}  // namespace baseline
namespace avx512 {
extern const ElementwiseKernels kElementwiseKernels;
extern const SmallGemmKernels kSmallGemmKernels;
extern const QuantizeKernels kQuantizeKernels;
}  // namespace avx512
namespace avx512_bf16 {
extern const Bf16GemmKernels kBf16GemmKernels;
extern const QuantizeKernels kQuantizeKernels;
}  // namespace avx512_bf16

// The table of the compilation for isa, or null where this build has none of that file or this
// CPU cannot run it. For tests that hold two compilations against each other.
const ElementwiseKernels* elementwise_kernels(Isa isa);
const SmallGemmKernels* small_gemm_kernels(Isa isa);
const Bf16GemmKernels* bf16_gemm_kernels(Isa isa);
const QuantizeKernels* quantize_kernels(Isa isa);

// What this build compiled and which code each dispatched file runs on this CPU (onepass info).
struct CodePaths {
  std::string march;                  // the -march of the build's flags; empty when none
  std::string baseline;               // what the baseline compilation uses (a `path` name)
  std::vector<std::string> variants;  // compilations besides it: "avx512", "avx512_bf16"
  std::string cpu;  // what this CPU runs (as cpu_supports): avx512_bf16, avx512, avx2 or scalar
  std::string elementwise;    // layer_norm, softmax, activations, gathers
  std::string small_gemm;     // attention's fp32 products
  std::string bf16_products;  // attention's bf16 products
  std::string quantize;       // bf16 / int8 conversions around the Linear products
};
CodePaths code_paths();

}  // namespace onepass::kernels
