// ElectraConfig as transformers v4.47.1 defines it: its defaults are electra-small's generator
// shape, and embeddings narrower than the hidden size are projected up (embeddings_project).
#pragma once

#include <string>

#include "weights/config.h"

namespace onepass::model {

struct ElectraConfig : weights::ModelConfig {
  int embedding_size = 128;
  std::string position_embedding_type = "absolute";  // only "absolute" runs
};

// ArchitectureFamily::read_config of ELECTRA.
void read_electra_family_config(weights::ModelConfig& config);

// The typed config the ELECTRA loader runs. Throws kInvalidModel for a non-positive
// embedding_size.
ElectraConfig electra_config(const weights::ModelConfig& config);

}  // namespace onepass::model
