#include <string>

#include "base/error.h"
#include "tokenizer/sources.h"

namespace onepass::tokenizer {
namespace {

namespace fs = std::filesystem;

std::unique_ptr<Tokenizer> load_file(const fs::path& model_dir, const fs::path& file) {
  const std::string name = file.filename().string();
  std::error_code ec;
  if (!fs::exists(file, ec)) {
    throw Error(ErrorKind::kNotFound, "tokenizer file " + name + " does not exist");
  }
  // Anything else there (a named pipe, a device) is refused by the reader, naming the file.
  if (name == "vocab.json") return load_bpe_files_tokenizer(model_dir, file);
  if (file.extension() == ".json") return load_tokenizer_json(file);
  if (file.extension() == ".model") return load_sentencepiece_tokenizer(model_dir, file);
  if (file.extension() == ".txt") return load_wordpiece_tokenizer(model_dir, file);
  throw Error(ErrorKind::kUnsupported,
              "unsupported tokenizer file " + name +
                  " (expected tokenizer.json, a SentencePiece .model, vocab.txt or vocab.json)");
}

}  // namespace

std::unique_ptr<Tokenizer> load_tokenizer(const fs::path& model_dir,
                                          const std::optional<fs::path>& file) {
  if (file) {
    const fs::path path = file->is_absolute() || fs::exists(*file) ? *file : model_dir / *file;
    return load_file(model_dir, path);
  }
  for (const char* candidate : {"tokenizer.json", "spm.model", "sentencepiece.bpe.model",
                                "tokenizer.model", "vocab.txt", "vocab.json"}) {
    const fs::path path = model_dir / candidate;
    // The first one present is the tokenizer; one that is not a regular file is an error, not
    // a reason to fall back to another file.
    std::error_code ec;
    if (fs::exists(path, ec)) return load_file(model_dir, path);
  }
  throw Error(ErrorKind::kNotFound,
              "no tokenizer in the model folder (looked for tokenizer.json, spm.model, "
              "sentencepiece.bpe.model, tokenizer.model, vocab.txt, vocab.json)");
}

}  // namespace onepass::tokenizer
