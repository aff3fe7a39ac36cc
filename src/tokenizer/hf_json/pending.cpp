// Placeholder until this tokenizer source lands: loading it is refused with a clear message.
// Delete this file when the real implementation is added.
#include "base/error.h"
#include "tokenizer/sources.h"

namespace onepass::tokenizer {

std::unique_ptr<Tokenizer> load_tokenizer_json(const std::filesystem::path&) {
  throw Error(ErrorKind::kUnsupported, "this build of onepass has no hf_json tokenizer yet");
}

}  // namespace onepass::tokenizer
