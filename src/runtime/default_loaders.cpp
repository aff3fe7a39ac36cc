// The real loaders: model::load_encoder and tokenizer::load_tokenizer.
#include <system_error>

#include "base/error.h"
#include "runtime/runtime.h"

namespace onepass::runtime {
namespace {

namespace fs = std::filesystem;

// tokenizer.json first (the ids TEI and AutoTokenizer give); when it uses a component this
// build lacks, the folder's slow-tokenizer files still serve the model rather than failing it.
std::unique_ptr<tokenizer::Tokenizer> load_folder_tokenizer(const fs::path& dir) {
  try {
    return tokenizer::load_tokenizer(dir);
  } catch (const Error& e) {
    if (e.kind() != ErrorKind::kUnsupported) throw;
    for (const char* slow : {"spm.model", "sentencepiece.bpe.model", "vocab.txt"}) {
      std::error_code ec;
      if (fs::is_regular_file(dir / slow, ec)) {
        return tokenizer::load_tokenizer(dir, dir / slow);
      }
    }
    throw;
  }
}

}  // namespace

ModelLoaders default_model_loaders() {
  ModelLoaders loaders;
  loaders.encoder = [](const fs::path& dir, const model::LoadOptions& options) {
    return model::load_encoder(dir, options);
  };
  loaders.tokenizer = load_folder_tokenizer;
  return loaders;
}

}  // namespace onepass::runtime
