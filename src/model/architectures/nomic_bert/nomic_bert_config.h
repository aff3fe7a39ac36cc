// NomicBertConfig as nomic-ai's remote code defines it (configuration_hf_nomic_bert.py on the Hub,
// used by nomic-embed-text-v1 / v1.5 and nomic-bert-2048): GPT2Config's
// names for the sizes (n_embd, n_head, n_layer, n_inner, n_positions, layer_norm_epsilon) and
// its own fields for rotary positions, the MLP and the biases.
//
// The branches those checkpoints take are supported: post-LayerNorm layers, rotary positions on
// the whole head (not interleaved; dynamic NTK scaling past max_trained_positions when
// rotary_scaling_factor is set, as nomic-embed-text-v1.5's model card suggests for 8192
// tokens), a gated MLP (swiglu, geglu) or a plain GELU one,
// biases on or off. Anything else (pre-LayerNorm, parallel blocks, RMSNorm, learned positions,
// dynamic NTK rotary scaling, mixture of experts, ...) is refused at load with its field named.
#pragma once

#include <cstdint>

#include "kernels/activation.h"
#include "weights/config.h"

namespace onepass::model {

// The rotary positions' base, and NomicBertDynamicNTKRotaryEmbedding's scaling of it.
struct NomicBertRotary {
  double base = 10000.0;        // rotary_emb_base
  double scaling_factor = 0.0;  // rotary_scaling_factor; 0: null, no scaling
  int max_trained_positions = 2048;
  std::int64_t head_dim = 64;

  // Whether a sequence of `length` tokens runs with a scaled base: past max_trained_positions,
  // with a scaling factor.
  bool scales(std::int64_t length) const {
    return scaling_factor != 0.0 && length > max_trained_positions;
  }
  // The base a sequence of `length` tokens runs with. Scaled, with factor f, length L,
  // max_trained_positions M and head size d: base · (f L / M - (f - 1))^(d / (d - 2)), in double
  // as the remote code's Python floats. That is what the remote code gives a sequence alone on a
  // freshly loaded model; it computes it from the padded batch length and keeps the last one for
  // later calls (so its answers depend on what ran before), which a server cannot reproduce and
  // should not.
  double base_for(std::int64_t length) const;
};

struct NomicBertConfig : weights::ModelConfig {
  NomicBertRotary rotary;
  bool qkv_bias = true;  // qkv_proj_bias: Wqkv and out_proj
  bool fc1_bias = true;  // mlp_fc1_bias: fc11 and fc12 (or fc1)
  bool fc2_bias = true;  // mlp_fc2_bias
  // swiglu and geglu: fc11(x) · act(fc12(x)), then fc2; otherwise act(fc1(x)), then fc2.
  bool gated_mlp = false;
  kernels::Activation mlp_activation = kernels::Activation::kGeluErf;
};

// ArchitectureFamily::read_config of NomicBERT.
void read_nomic_bert_family_config(weights::ModelConfig& config);

// The typed config the NomicBERT loader runs. Throws kUnsupported for a branch of the remote code
// this engine does not run, kInvalidModel for an impossible value.
NomicBertConfig nomic_bert_config(const weights::ModelConfig& config);

}  // namespace onepass::model
