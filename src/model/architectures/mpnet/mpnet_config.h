// MPNetConfig as transformers v4.40.2 defines it (models/mpnet/configuration_mpnet.py): BERT's
// sizes without token types, pad id 1, and the number of relative-position buckets.
#pragma once

#include "weights/config.h"

namespace onepass::model {

struct MpnetConfig : weights::ModelConfig {
  int relative_attention_num_buckets = 32;
};

// ArchitectureFamily::read_config of MPNet.
void read_mpnet_family_config(weights::ModelConfig& config);

// The typed config the MPNet loader runs. Throws kInvalidModel for fewer than 32 buckets and
// kUnsupported for a pad_token_id other than 1 (see mpnet.cpp).
MpnetConfig mpnet_config(const weights::ModelConfig& config);

}  // namespace onepass::model
