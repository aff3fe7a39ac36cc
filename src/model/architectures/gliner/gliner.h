// GLiNER checkpoints (urchade/GLiNER's UniEncoderSpanGLiNER: gliner_multi-v2.1, NuNER Zero, ...):
// a folder with gliner_config.json, the weights (pytorch_model.bin or model.safetensors, the
// backbone nested under token_rep_layer.bert_layer.model.) and the tokenizer with GLiNER's
// added tokens. The backbone is one of this project's encoders, built from the config's
// encoder_config (else the folder's config.json) as its base model; the span head is
// model/heads/span_head.h. Other GLiNER variants (token_level span mode, bi-encoders, label
// decoders, relation extraction) are refused by name.
#pragma once

#include <filesystem>
#include <memory>

#include "model/encoder.h"

namespace onepass::model {

// What the folder serves, from gliner_config.json alone (no weights read). Throws
// onepass::Error: kUnsupported for a GLiNER variant or backbone onepass does not run (naming
// it), kInvalidModel for an impossible config.
ModelInfo describe_gliner(const std::filesystem::path& model_dir);

// The whole model. Throws as describe_gliner and as load_encoder does for the weights.
std::unique_ptr<Encoder> load_gliner(const std::filesystem::path& model_dir,
                                     const LoadOptions& options);

}  // namespace onepass::model
