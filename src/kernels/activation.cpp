#include "kernels/activation.h"

#include <string>

#include "base/error.h"

namespace onepass::kernels {

Activation activation_from_hf(std::string_view name) {
  if (name == "gelu") return Activation::kGeluErf;
  if (name == "gelu_new" || name == "gelu_pytorch_tanh" || name == "gelu_fast")
    return Activation::kGeluTanh;
  if (name == "quick_gelu") return Activation::kQuickGelu;
  if (name == "relu") return Activation::kRelu;
  if (name == "silu" || name == "swish") return Activation::kSilu;
  if (name == "tanh") return Activation::kTanh;
  if (name == "linear") return Activation::kIdentity;
  throw Error(ErrorKind::kUnsupported,
              "activation " + std::string(name.substr(0, 40)) +
                  " is not supported (supported: gelu, gelu_new, gelu_pytorch_tanh, gelu_fast, "
                  "quick_gelu, relu, silu, swish, tanh, linear)");
}

const char* activation_name(Activation act) {
  switch (act) {
    case Activation::kIdentity:
      return "linear";
    case Activation::kGeluErf:
      return "gelu";
    case Activation::kGeluTanh:
      return "gelu_new";
    case Activation::kQuickGelu:
      return "quick_gelu";
    case Activation::kRelu:
      return "relu";
    case Activation::kSilu:
      return "silu";
    case Activation::kTanh:
      return "tanh";
  }
  return "?";
}

}  // namespace onepass::kernels
