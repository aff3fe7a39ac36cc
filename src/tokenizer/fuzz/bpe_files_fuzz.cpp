// libFuzzer target: the byte-level BPE folder source (vocab.json + merges.txt, no tokenizer.json)
// with the slow tokenizers' config files, on arbitrary bytes. The input is the folder's files
// separated by NUL bytes, in the order of kFiles, then a text to encode; a missing or empty part
// leaves that file out. The files are written to a folder of this process and loaded as
// `onepass serve` loads a model folder's tokenizer: any folder must load or fail with
// onepass::Error, and a loaded tokenizer must encode (tokenizer_json_fuzz_common.h's checks).
#include <unistd.h>

#include <array>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>

#include "tokenizer/fuzz/tokenizer_json_fuzz_common.h"
#include "tokenizer/sources.h"

namespace {

namespace fs = std::filesystem;

constexpr std::array<const char*, 6> kFiles = {
    "vocab.json",        "merges.txt", "tokenizer_config.json", "special_tokens_map.json",
    "added_tokens.json", "config.json"};

// A folder of its own under the temporary directory, removed when the process exits normally
// (a crash leaves it for the reproduction).
class ScratchFolder {
 public:
  ScratchFolder() {
    std::string pattern = (fs::temp_directory_path() / "onepass-bpe-files-fuzz.XXXXXX").string();
    if (mkdtemp(pattern.data()) == nullptr) std::abort();
    path_ = pattern;
  }
  ~ScratchFolder() {
    std::error_code ignored;
    fs::remove_all(path_, ignored);
  }
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

void write_or_remove(const fs::path& file, std::string_view content) {
  std::error_code ignored;
  fs::remove(file, ignored);
  if (content.empty()) return;
  std::ofstream out(file, std::ios::binary);
  out.write(content.data(), static_cast<std::streamsize>(content.size()));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const ScratchFolder folder;
  std::string_view rest(reinterpret_cast<const char*>(data), size);
  for (const char* name : kFiles) {
    const std::size_t cut = rest.find('\0');
    write_or_remove(folder.path() / name, rest.substr(0, cut));
    rest = cut == std::string_view::npos ? std::string_view() : rest.substr(cut + 1);
  }
  try {
    const auto tok =
        onepass::tokenizer::load_bpe_files_tokenizer(folder.path(), folder.path() / "vocab.json");
    // The first byte of the text picks truncation and special tokens (fuzz_one).
    const std::string text =
        rest.empty() ? std::string("\x81 Hello [MASK] <mask>") : std::string(rest);
    onepass::tokenizer::fuzz::fuzz_one(*tok, reinterpret_cast<const std::uint8_t*>(text.data()),
                                       text.size());
  } catch (const onepass::Error&) {
  }
  return 0;
}
