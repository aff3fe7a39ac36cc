#include "model/architectures/distilbert/distilbert_config.h"

namespace onepass::model {

void read_distilbert_family_config(weights::ModelConfig& config) {
  const weights::ConfigFields& f = *config.fields;
  config.pad_token_id = 0;
  config.hidden_size = 768;
  config.num_hidden_layers = 6;
  config.num_attention_heads = 12;
  config.intermediate_size = 3072;
  config.hidden_act = "gelu";
  config.type_vocab_size = 0;
  config.layer_norm_eps = 1e-12;
  f.read("pad_token_id", config.pad_token_id);
  f.read("vocab_size", config.vocab_size);
  f.read("max_position_embeddings", config.max_position_embeddings);
  f.read("dim", config.hidden_size);
  f.read("n_layers", config.num_hidden_layers);
  f.read("n_heads", config.num_attention_heads);
  f.read("hidden_dim", config.intermediate_size);
  f.read("activation", config.hidden_act);
}

}  // namespace onepass::model
