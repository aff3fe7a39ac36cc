// DistilBertConfig as transformers v4.47.1 defines it: the encoder sizes under its own names
// (dim, n_layers, n_heads, hidden_dim, activation; its attribute_map maps them to BERT's), no
// token types, and LayerNorms with eps 1e-12 whatever the file says. sinusoidal_pos_embds only
// changes how the position table is initialised: the table is in the checkpoint either way.
#pragma once

#include "weights/config.h"

namespace onepass::model {

// ArchitectureFamily::read_config of DistilBERT; its loader runs the shared ModelConfig, as
// DistilBERT has no field of its own that the engine reads.
void read_distilbert_family_config(weights::ModelConfig& config);

}  // namespace onepass::model
