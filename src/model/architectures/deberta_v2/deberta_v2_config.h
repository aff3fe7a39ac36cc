// DebertaV2Config as transformers v4.47.1 defines it, and the getattr() defaults of its modeling
// code for the fields the config class does not declare (share_att_key, position_buckets,
// norm_rel_ebd, conv_*, embedding_size).
#pragma once

#include <string>
#include <vector>

#include "weights/config.h"

namespace onepass::model {

struct DebertaV2Config : weights::ModelConfig {
  bool relative_attention = false;
  int max_relative_positions = -1;
  int position_buckets = -1;
  std::vector<std::string> pos_att_type;  // subset/order of "c2p", "p2c" ("c2p|p2c" split)
  // How many terms the attention scale counts: HF divides the scores by sqrt(head_size * (1 +
  // score_terms)). -1: DeBERTa-v2's rule, one for each of "c2p" and "p2c" listed; DeBERTa (v1)
  // counts every item of pos_att_type.
  int score_terms = -1;
  bool share_att_key = false;
  std::string norm_rel_ebd = "none";  // "none" or e.g. "layer_norm"
  bool position_biased_input = true;
  int embedding_size = 0;    // getattr(config, "embedding_size", hidden_size): set from hidden_size
  int conv_kernel_size = 0;  // 0: no convolution layer
  std::string conv_act = "tanh";
  int conv_groups = 1;
  int pooler_hidden_size = 0;  // kwargs.get("pooler_hidden_size", hidden_size)
  std::string pooler_hidden_act = "gelu";
  double pooler_dropout = 0.0;
  // DebertaV2ForMaskedLM's head (transformers 4.48): true, transformers' own layout
  // (cls.predictions: transform, decoder tied to the word embeddings, bias); false, the one
  // Microsoft's DeBERTa-v3 checkpoints ship (lm_predictions.lm_head: dense, LayerNorm, bias,
  // the word embeddings as decoder).
  bool legacy = true;
};

// ArchitectureFamily::read_config of DeBERTa-v2.
void read_deberta_v2_family_config(weights::ModelConfig& config);

// The typed config the DeBERTa-v2 loader runs. Throws kInvalidModel for an impossible field of
// its own (negative embedding_size or conv_kernel_size, non-positive conv_groups or
// pooler_hidden_size).
DebertaV2Config deberta_v2_config(const weights::ModelConfig& config);

}  // namespace onepass::model
