// The real loaders: model::load_encoder and tokenizer::load_tokenizer.
#include "base/error.h"
#include "runtime/runtime.h"

namespace onepass::runtime {

// The folder's tokenizer comes from tokenizer::load_tokenizer's own order (tokenizer.json, then
// the SentencePiece model, then vocab.txt). A tokenizer.json that uses a component onepass lacks
// fails the model's load with a message naming the component: silently serving the slow
// tokenizer's ids instead would change answers on the inputs where the two disagree.
ModelLoaders default_model_loaders() {
  ModelLoaders loaders;
  loaders.encoder = [](const std::filesystem::path& dir, const model::LoadOptions& options) {
    return model::load_encoder(dir, options);
  };
  loaders.tokenizer = [](const std::filesystem::path& dir) {
    return tokenizer::load_tokenizer(dir);
  };
  return loaders;
}

}  // namespace onepass::runtime
