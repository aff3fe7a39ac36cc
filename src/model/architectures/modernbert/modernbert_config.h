// ModernBertConfig as transformers defines it (models/modernbert/configuration_modernbert.py,
// added in v4.48): the encoder sizes under BERT's names, its own names for the LayerNorm epsilon
// and the activation, and the fields of its attention (rotary positions, local attention every
// layer but each global_attn_every_n_layers-th) and of its heads.
#pragma once

#include <string>

#include "weights/config.h"

namespace onepass::model {

struct ModernBertConfig : weights::ModelConfig {
  bool norm_bias = false;       // every LayerNorm has a bias
  bool attention_bias = false;  // Wqkv and Wo have biases
  bool mlp_bias = false;        // Wi and Wo have biases
  int global_attn_every_n_layers = 3;
  int local_attention = 128;  // window width: a local layer's query sees keys within half of it
  double global_rope_theta = 160000.0;
  double local_rope_theta = 10000.0;       // config.json's null means global_rope_theta
  std::string classifier_pooling = "cls";  // "cls" or "mean" (sequence classification)
  bool classifier_bias = false;            // the prediction head's dense
  std::string classifier_activation = "gelu";
  bool decoder_bias = true;  // ForMaskedLM's decoder

  // Whether layer `index` attends globally (transformers: layer_id % every_n == 0).
  bool global_layer(int index) const { return index % global_attn_every_n_layers == 0; }
};

// ArchitectureFamily::read_config of ModernBERT.
void read_modernbert_family_config(weights::ModelConfig& config);

// The typed config the ModernBERT loader runs. Throws kInvalidModel for an impossible field and
// kUnsupported for a classifier_pooling other than "cls" or "mean".
ModernBertConfig modernbert_config(const weights::ModelConfig& config);

}  // namespace onepass::model
