#include "model/architectures/bert/bert_config.h"

namespace onepass::model {

void read_bert_family_config(weights::ModelConfig& config) {
  // BertConfig's defaults are ModelConfig's own; RobertaConfig and XLMRobertaConfig differ only
  // in pad_token_id.
  const bool roberta = config.model_type == "roberta" || config.model_type == "xlm-roberta";
  config.pad_token_id = roberta ? 1 : 0;
  weights::read_encoder_sizes(config);
}

BertConfig bert_config(const weights::ModelConfig& config) {
  BertConfig out;
  static_cast<weights::ModelConfig&>(out) = config;
  config.fields->read("position_embedding_type", out.position_embedding_type);
  return out;
}

}  // namespace onepass::model
