#include "model/architectures/modernbert/modernbert_config.h"

#include <optional>

#include "base/error.h"

namespace onepass::model {

void read_modernbert_family_config(weights::ModelConfig& config) {
  // ModernBertConfig's defaults (answerdotai/ModernBERT-base's sizes).
  config.vocab_size = 50368;
  config.hidden_size = 768;
  config.num_hidden_layers = 22;
  config.num_attention_heads = 12;
  config.intermediate_size = 1152;
  config.max_position_embeddings = 8192;
  config.pad_token_id = 50283;
  config.layer_norm_eps = 1e-5;
  config.hidden_act = "gelu";
  weights::read_encoder_sizes(config);
  // Its own names for two of the shared fields, and no token types.
  config.fields->read("norm_eps", config.layer_norm_eps);
  config.fields->read("hidden_activation", config.hidden_act);
  config.type_vocab_size = 0;
  modernbert_config(config);  // refuses its own impossible fields before load too
}

ModernBertConfig modernbert_config(const weights::ModelConfig& config) {
  ModernBertConfig c;
  static_cast<weights::ModelConfig&>(c) = config;
  const weights::ConfigFields& f = *config.fields;
  f.read("norm_bias", c.norm_bias);
  f.read("attention_bias", c.attention_bias);
  f.read("mlp_bias", c.mlp_bias);
  f.read("global_attn_every_n_layers", c.global_attn_every_n_layers);
  f.read("local_attention", c.local_attention);
  f.read("global_rope_theta", c.global_rope_theta);
  // null: ModernBertAttention gives local layers the global theta; absent: the class default.
  if (f.holds_null("local_rope_theta")) {
    c.local_rope_theta = c.global_rope_theta;
  } else {
    f.read("local_rope_theta", c.local_rope_theta);
  }
  f.read("classifier_pooling", c.classifier_pooling);
  f.read("classifier_bias", c.classifier_bias);
  f.read("classifier_activation", c.classifier_activation);
  f.read("decoder_bias", c.decoder_bias);
  if (c.global_attn_every_n_layers <= 0)
    weights::config_error("field global_attn_every_n_layers must be positive");
  if (c.local_attention < 0) weights::config_error("field local_attention must not be negative");
  if (!(c.global_rope_theta > 0.0) || !(c.local_rope_theta > 0.0))
    weights::config_error("fields global_rope_theta and local_rope_theta must be positive");
  if (c.head_dim() % 2 != 0) weights::config_error("rotary positions need an even head size");
  if (c.classifier_pooling != "cls" && c.classifier_pooling != "mean") {
    throw Error(ErrorKind::kUnsupported, "config.json: classifier_pooling \"" +
                                             c.classifier_pooling +
                                             "\" is not supported (ModernBERT has cls and mean)");
  }
  return c;
}

}  // namespace onepass::model
