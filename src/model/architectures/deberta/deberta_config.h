// DebertaConfig (DeBERTa v1) as transformers v4.47.1 defines it, read into the config the
// DeBERTa-v2 encoder runs: v1 is v2 without log-bucketed positions, shared attention keys,
// relative-embedding LayerNorm or convolution, so those fields keep their "off" values whatever
// config.json says (v1's modeling code never reads them).
#pragma once

#include "model/architectures/deberta_v2/deberta_v2_config.h"
#include "weights/config.h"

namespace onepass::model {

// ArchitectureFamily::read_config of DeBERTa (v1).
void read_deberta_family_config(weights::ModelConfig& config);

// The typed config the loader runs. Throws kInvalidModel for an impossible field of its own
// (non-positive embedding_size or pooler_hidden_size).
DebertaV2Config deberta_config(const weights::ModelConfig& config);

}  // namespace onepass::model
