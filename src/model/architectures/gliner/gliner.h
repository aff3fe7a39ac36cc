// GLiNER checkpoints (urchade/GLiNER's UniEncoderSpanGLiNER: gliner_multi-v2.1, NuNER Zero, ...):
// a folder with gliner_config.json, the weights (pytorch_model.bin or model.safetensors, the
// backbone nested under token_rep_layer.bert_layer.model.) and the tokenizer with GLiNER's
// added tokens. The backbone is one of this project's encoders, built from the config's
// encoder_config, else the folder's config.json, else the config.json of the backbone that
// model_name names (a local folder, else through the backbone config finder below) as its base
// model; the span head is
// model/heads/span_head.h. Other GLiNER variants (token_level span mode, bi-encoders, label
// decoders, relation extraction) are refused by name.
#pragma once

#include <filesystem>
#include <functional>
#include <memory>
#include <string>

#include "model/encoder.h"

namespace onepass::model {

// Where the config.json of the backbone a gliner_config.json without encoder_config names
// (model_name, a Hub id such as "microsoft/mdeberta-v3-base") is found: GLiNER itself calls
// AutoConfig.from_pretrained(model_name). The model layer reaches no Hub; the app installs a
// finder (hub::resolve_file: the Hub cache, else a download) before any model loads. It returns
// the file's path or throws onepass::Error saying why it cannot. None installed: such a folder
// is refused, naming what is missing.
using BackboneConfigFinder = std::function<std::filesystem::path(const std::string& model_name)>;
void set_backbone_config_finder(BackboneConfigFinder finder);

// What the folder serves, from gliner_config.json alone (no weights read). Throws
// onepass::Error: kUnsupported for a GLiNER variant or backbone onepass does not run (naming
// it), kInvalidModel for an impossible config.
ModelInfo describe_gliner(const std::filesystem::path& model_dir);

// The whole model. Throws as describe_gliner and as load_encoder does for the weights.
std::unique_ptr<Encoder> load_gliner(const std::filesystem::path& model_dir,
                                     const LoadOptions& options);

}  // namespace onepass::model
