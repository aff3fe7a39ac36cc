// The one Precision type: what the encoder layers' matrix products run in, named by `--precision`
// everywhere (run, serve, check, the registry's log), and the one policy for which of attention's
// products follow it.
#pragma once

#include <cstdint>
#include <string>

namespace onepass::kernels {

enum class Precision { kFp32, kBf16, kInt8 };

// "fp32", "bf16", "int8".
const char* precision_name(Precision precision);

// The inverse of precision_name; throws onepass::Error(kInvalidArgument) naming the value and
// the choices otherwise.
Precision precision_from_name(const std::string& name);

// Which of attention's products run in bf16 (fp32 accumulation, fp32 softmax) under a reduced
// precision; LayerNorm, softmax, activations and heads stay fp32 under all of them.
struct AttentionPrecision {
  bool bf16_values = false;  // P·V (and DeBERTa's relative products)
  bool bf16_scores = false;  // Q·Kᵀ as well
};

// The two attention kernels the architectures run.
enum class AttentionKind {
  kStandard,      // softmax(Q·Kᵀ)·V, one kernel for both products (BERT, DistilBERT, ELECTRA)
  kDisentangled,  // DeBERTa-v2: content and relative scores, P·V
};

// bf16: both products. int8: the standard kernel keeps fp32 (on the XLM-R perf shape even a bf16
// P·V alone raised int8's mean logit error by 19%); the disentangled one takes P·V and its
// relative products in bf16 but not Q·Kᵀ (on the mDeBERTa perf shape a bf16 Q·Kᵀ raised int8's
// mean logit error by 14%, P·V and the relative products together by 4%, for about 4% of int8's
// time). fp32: neither. bf16 products pair values along head_size, so an odd head_size and a CPU
// without bf16 dot products keep fp32.
AttentionPrecision attention_precision(Precision precision, AttentionKind kind,
                                       std::int64_t head_size);

}  // namespace onepass::kernels
