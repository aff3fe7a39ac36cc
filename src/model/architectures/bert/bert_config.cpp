#include "model/architectures/bert/bert_config.h"

#include "model/architectures/architectures.h"

namespace onepass::model {

void read_bert_family_config(weights::ModelConfig& config) {
  // BertConfig's defaults are ModelConfig's own; the config classes of RoBERTa's code
  // (RobertaConfig, XLMRobertaConfig, CamembertConfig) differ only in pad_token_id. The
  // architecture's table line tells them apart (a class's from_pretrained reads its own
  // config_class), not model_type, so that a new member is one table line. pad_token_id only
  // matters where roberta_code numbers positions after it. The caller has checked the
  // architecture is in the table.
  const bool roberta = find_architecture(config.architectures.front())->roberta_code;
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
