// NewConfig, GTE's config class as Alibaba-NLP's remote code defines it (configuration.py of
// Alibaba-NLP/new-impl on the Hub, which gte-base-en-v1.5, gte-large-en-v1.5,
// gte-multilingual-base and gte-multilingual-reranker-base name in their auto_map): BERT's names
// for the sizes, plus rotary positions and their scaling.
//
// The branches those checkpoints take are supported: rotary positions (rope_theta) on the whole
// head, fixed NTK scaling (rope_scaling {"type": "ntk", "factor": f}), a packed qkv_proj,
// LayerNorm, any token-type count. Anything else (absolute positions, mixed NTK, RMSNorm,
// separate q/k/v projections, log-n attention scaling) is refused at load with its field named.
// unpad_inputs and use_memory_efficient_attention choose how the remote code runs the same
// attention (xformers, unpadded) and change nothing here.
#pragma once

#include "weights/config.h"

namespace onepass::model {

struct GteConfig : weights::ModelConfig {
  double rope_theta = 10000.0;
  // rope_scaling's NTK factor; 1: no scaling. With factor f and head size d the remote code's
  // NTKScalingRotaryEmbedding builds every position's angles with base rope_theta · f and each
  // inverse frequency divided by f^(2 / d), whatever the input's length.
  double ntk_factor = 1.0;
};

// ArchitectureFamily::read_config of GTE.
void read_gte_family_config(weights::ModelConfig& config);

// The typed config the GTE loader runs. Throws kUnsupported for a branch of the remote code this
// engine does not run, kInvalidModel for an impossible value.
GteConfig gte_config(const weights::ModelConfig& config);

}  // namespace onepass::model
