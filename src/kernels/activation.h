// Activation functions by their Hugging Face `hidden_act` names (transformers' ACT2FN).
#pragma once

#include <string_view>

namespace onepass::kernels {

enum class Activation {
  kIdentity,   // "linear"
  kGeluErf,    // "gelu": x * 0.5 * (1 + erf(x / sqrt(2))), exact (transformers' GELUActivation)
  kGeluTanh,   // "gelu_new", "gelu_pytorch_tanh", "gelu_fast": the tanh approximation
  kQuickGelu,  // "quick_gelu": x * sigmoid(1.702 x)
  kRelu,       // "relu"
  kSilu,       // "silu", "swish"
  kTanh,       // "tanh"
};

// Throws onepass::Error(kUnsupported) naming the value for anything else.
Activation activation_from_hf(std::string_view hidden_act);
const char* activation_name(Activation act);

}  // namespace onepass::kernels
