// libFuzzer target: the SentencePiece slow tokenizers (XLM-R and DeBERTa-v2 fixtures) on any
// bytes. Bit 5 of the first byte picks the model.
#include <memory>

#include "slow_fuzz_common.h"

namespace {

const onepass::tokenizer::Tokenizer& pick(bool deberta) {
  static const auto models = [] {
    const std::filesystem::path dir =
        std::filesystem::path(ONEPASS_TEST_DATA_DIR) / "fixtures/models";
    return std::pair{onepass::tokenizer::load_tokenizer(
                         dir / "xlmr-tiny-nli", dir / "xlmr-tiny-nli/sentencepiece.bpe.model"),
                     onepass::tokenizer::load_tokenizer(dir / "deberta-v2-tiny-nli",
                                                        dir / "deberta-v2-tiny-nli/spm.model")};
  }();
  return deberta ? *models.second : *models.first;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  onepass::tokenizer::fuzzing::encode_fuzz_input(pick((data[0] & 32) != 0), data, size);
  return 0;
}
