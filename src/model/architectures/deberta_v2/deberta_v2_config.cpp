#include "model/architectures/deberta_v2/deberta_v2_config.h"

#include <sstream>

namespace onepass::model {

void read_deberta_v2_family_config(weights::ModelConfig& config) {
  config.vocab_size = 128100;
  config.hidden_size = 1536;
  config.num_hidden_layers = 24;
  config.num_attention_heads = 24;
  config.intermediate_size = 6144;
  config.type_vocab_size = 0;
  config.layer_norm_eps = 1e-7;
  config.pad_token_id = 0;
  weights::read_encoder_sizes(config);
  deberta_v2_config(config);  // refuses its own impossible fields before load too
}

DebertaV2Config deberta_v2_config(const weights::ModelConfig& config) {
  DebertaV2Config c;
  static_cast<weights::ModelConfig&>(c) = config;
  const weights::ConfigFields& f = *config.fields;
  f.read("relative_attention", c.relative_attention);
  f.read("max_relative_positions", c.max_relative_positions);
  f.read("position_buckets", c.position_buckets);
  // DebertaV2Config accepts pos_att_type as a list or as "p2c|c2p".
  if (f.holds_string("pos_att_type")) {
    std::string text;
    f.read("pos_att_type", text);
    std::stringstream parts(text);
    std::string part;
    while (std::getline(parts, part, '|')) {
      if (!part.empty()) c.pos_att_type.push_back(part);
    }
  } else {
    f.read("pos_att_type", c.pos_att_type);
  }
  f.read("share_att_key", c.share_att_key);
  f.read("norm_rel_ebd", c.norm_rel_ebd);
  f.read("position_biased_input", c.position_biased_input);
  c.embedding_size = c.hidden_size;
  f.read("embedding_size", c.embedding_size);
  f.read("conv_kernel_size", c.conv_kernel_size);
  f.read("conv_act", c.conv_act);
  f.read("conv_groups", c.conv_groups);
  c.pooler_hidden_size = c.hidden_size;
  f.read("pooler_hidden_size", c.pooler_hidden_size);
  f.read("pooler_hidden_act", c.pooler_hidden_act);
  f.read("legacy", c.legacy);
  f.read("pooler_dropout", c.pooler_dropout);

  if (c.embedding_size <= 0) weights::config_error("field embedding_size must be positive");
  if (c.conv_kernel_size < 0) weights::config_error("field conv_kernel_size must not be negative");
  if (c.conv_groups <= 0) weights::config_error("field conv_groups must be positive");
  if (c.pooler_hidden_size <= 0) weights::config_error("field pooler_hidden_size must be positive");
  return c;
}

}  // namespace onepass::model
