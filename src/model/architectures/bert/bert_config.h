// BertConfig, RobertaConfig, XLMRobertaConfig and CamembertConfig as transformers v4.47.1
// defines them: the shared encoder sizes with BertConfig's defaults (the RoBERTa-code classes pad
// with id 1) and the one field of their own this engine reads.
#pragma once

#include <string>

#include "weights/config.h"

namespace onepass::model {

struct BertConfig : weights::ModelConfig {
  std::string position_embedding_type = "absolute";  // only "absolute" runs
};

// ArchitectureFamily::read_config of the BERT family.
void read_bert_family_config(weights::ModelConfig& config);

// The typed config the BERT loader runs, from what read_bert_family_config filled in.
BertConfig bert_config(const weights::ModelConfig& config);

}  // namespace onepass::model
