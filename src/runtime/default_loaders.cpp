// The real loaders: model::load_encoder and tokenizer::load_tokenizer. The engine library may
// be missing from a build (the fuzz preset, or before it landed); then loading a model is
// refused with a message instead of failing to link.
#include "base/error.h"
#include "runtime/runtime.h"

namespace onepass::runtime {

ModelLoaders default_model_loaders() {
  ModelLoaders loaders;
#ifdef ONEPASS_RUNTIME_HAVE_ENGINE
  loaders.encoder = [](const std::filesystem::path& dir, const model::LoadOptions& options) {
    return model::load_encoder(dir, options);
  };
#else
  loaders.encoder = [](const std::filesystem::path&,
                       const model::LoadOptions&) -> std::unique_ptr<model::Encoder> {
    throw Error(ErrorKind::kUnsupported, "this build of onepass has no inference engine");
  };
#endif
  loaders.tokenizer = [](const std::filesystem::path& dir) {
    return tokenizer::load_tokenizer(dir);
  };
  return loaders;
}

}  // namespace onepass::runtime
