#include "model/architectures/electra/electra_config.h"

namespace onepass::model {

void read_electra_family_config(weights::ModelConfig& config) {
  config.hidden_size = 256;
  config.num_attention_heads = 4;
  config.intermediate_size = 1024;
  config.pad_token_id = 0;
  weights::read_encoder_sizes(config);
  electra_config(config);  // refuses its own impossible fields before load too
}

ElectraConfig electra_config(const weights::ModelConfig& config) {
  ElectraConfig out;
  static_cast<weights::ModelConfig&>(out) = config;
  config.fields->read("embedding_size", out.embedding_size);
  config.fields->read("position_embedding_type", out.position_embedding_type);
  if (out.embedding_size <= 0) weights::config_error("field embedding_size must be positive");
  return out;
}

}  // namespace onepass::model
