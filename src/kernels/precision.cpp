#include "kernels/precision.h"

#include "base/error.h"
#include "kernels/small_gemm_bf16.h"

namespace onepass::kernels {

const char* precision_name(Precision precision) {
  switch (precision) {
    case Precision::kFp32:
      return "fp32";
    case Precision::kBf16:
      return "bf16";
    case Precision::kInt8:
      return "int8";
  }
  return "?";
}

Precision precision_from_name(const std::string& name) {
  for (const Precision p : {Precision::kFp32, Precision::kBf16, Precision::kInt8}) {
    if (name == precision_name(p)) return p;
  }
  throw Error(ErrorKind::kInvalidArgument,
              "unknown precision '" + name.substr(0, 32) + "' (fp32, bf16 or int8)");
}

AttentionPrecision attention_precision(Precision precision, AttentionKind kind,
                                       std::int64_t head_size) {
  AttentionPrecision out;
  if (!has_bf16_gemm() || head_size % 2 != 0) return out;
  out.bf16_scores = precision == Precision::kBf16;
  out.bf16_values =
      out.bf16_scores || (precision == Precision::kInt8 && kind == AttentionKind::kDisentangled);
  return out;
}

}  // namespace onepass::kernels
