// libFuzzer target: the WordPiece slow tokenizer (BertTokenizer) on any bytes, cased (the
// fixture's vocab.txt) and uncased (the same vocabulary with do_lower_case, set up in a temporary
// folder), so lowercasing, accent stripping and the special-token rules all run. Bit 5 of the
// first byte picks the variant.
#include <unistd.h>

#include <fstream>
#include <memory>

#include "slow_fuzz_common.h"

namespace {

namespace fs = std::filesystem;

const onepass::tokenizer::Tokenizer& pick(bool uncased) {
  static const auto models = [] {
    const fs::path cased = fs::path(ONEPASS_TEST_DATA_DIR) / "fixtures/models/bert-tiny-nli";
    const fs::path lower =
        fs::temp_directory_path() / ("onepass_wordpiece_fuzz_" + std::to_string(::getpid()));
    fs::create_directories(lower);
    fs::copy_file(cased / "vocab.txt", lower / "vocab.txt", fs::copy_options::overwrite_existing);
    std::ofstream(lower / "tokenizer_config.json")
        << R"({"tokenizer_class": "BertTokenizer", "do_lower_case": true, "never_split": ["[unused1]"]})";
    auto pair = std::pair{onepass::tokenizer::load_tokenizer(cased, cased / "vocab.txt"),
                          onepass::tokenizer::load_tokenizer(lower, lower / "vocab.txt")};
    fs::remove_all(lower);
    return pair;
  }();
  return uncased ? *models.second : *models.first;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  onepass::tokenizer::fuzzing::encode_fuzz_input(pick((data[0] & 32) != 0), data, size);
  return 0;
}
