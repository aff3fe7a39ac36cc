#include "model/architectures/mpnet/mpnet_config.h"

#include <string>

#include "base/error.h"

namespace onepass::model {

void read_mpnet_family_config(weights::ModelConfig& config) {
  config.vocab_size = 30527;
  config.pad_token_id = 1;
  weights::read_encoder_sizes(config);
  config.type_vocab_size = 0;  // MPNet has no token type embedding, whatever config.json says
  mpnet_config(config);        // refuses its own impossible fields before load too
}

MpnetConfig mpnet_config(const weights::ModelConfig& config) {
  MpnetConfig out;
  static_cast<weights::ModelConfig&>(out) = config;
  config.fields->read("relative_attention_num_buckets", out.relative_attention_num_buckets);
  // MPNetEncoder buckets relative positions into 32 whatever the config says
  // (compute_position_bias' num_buckets default), so the table needs at least 32 rows.
  if (out.relative_attention_num_buckets < 32) {
    weights::config_error(
        "field relative_attention_num_buckets must be at least 32 (MPNet uses 32)");
  }
  // MPNetEmbeddings numbers positions from padding_idx 1 whatever pad_token_id says; with
  // another pad id transformers and this engine would part ways on what counts as padding.
  if (out.pad_token_id != 1) {
    throw Error(ErrorKind::kUnsupported,
                "config.json: MPNet with pad_token_id " +
                    (out.pad_token_id ? std::to_string(*out.pad_token_id) : std::string("null")) +
                    " is not supported (MPNet's positions assume padding id 1)");
  }
  return out;
}

}  // namespace onepass::model
