// libFuzzer: the tokenizer.json bpe pipeline of fixtures/tokenizers/roberta-bpe-tiny on arbitrary
// bytes.
#include "tokenizer/fuzz/tokenizer_json_fuzz_common.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace onepass::tokenizer;
  fuzz::fuzz_one(fuzz::fixture_tokenizer("tokenizers/roberta-bpe-tiny/tokenizer.json"), data, size);
  return 0;
}
