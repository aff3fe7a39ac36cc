// DeBERTa-v2 / v3 (DebertaV2Model, DebertaV2ForSequenceClassification; mDeBERTa-v3 among them),
// exact to Hugging Face transformers v4.47.1 in float32 inference.
//
// Padding-free: the embeddings, every linear layer, the LayerNorms and the optional conv run
// on the packed [total_tokens, hidden] batch; the disentangled attention runs per (sequence,
// head). The relative-embedding projections (pos_key / pos_query) depend on weights only, so
// they are computed once at load.
#pragma once

#include <memory>

#include "model/encoder.h"
#include "weights/config.h"
#include "weights/weight_store.h"

namespace onepass::model {

// Throws onepass::Error: kInvalidModel (a missing tensor or a shape that disagrees with the
// config), kUnsupported (a configuration transformers itself cannot run, such as an even
// conv_kernel_size, or an activation the kernels lack).
std::unique_ptr<Encoder> load_deberta_v2(const weights::ModelConfig& config,
                                         weights::WeightStore store, const LoadOptions& options);

}  // namespace onepass::model
