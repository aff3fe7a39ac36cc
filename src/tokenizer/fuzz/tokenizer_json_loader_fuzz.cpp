// libFuzzer: the tokenizer.json loader on arbitrary documents. Inputs are spliced into a small
// valid tokenizer.json skeleton half of the time so that the fuzzer reaches component parsing;
// any document must either load or fail with onepass::Error, and a loaded one must encode.
#include <string>

#include "tokenizer/fuzz/tokenizer_json_fuzz_common.h"
#include "tokenizer/hf_json/tokenizer_json.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace onepass::tokenizer;
  std::string doc(reinterpret_cast<const char*>(data), size);
  if (size > 0 && (data[0] & 1)) {
    // Use the input as the pre_tokenizer / normalizer objects of a WordPiece tokenizer.
    doc =
        R"({"normalizer":)" + doc.substr(1) +
        R"(,"pre_tokenizer":{"type":"Whitespace"},"model":{"type":"WordPiece","unk_token":"[UNK]",)"
        R"("vocab":{"[UNK]":0,"a":1,"##b":2,"ab":3}},"added_tokens":[{"id":4,"content":"<x>",)"
        R"("special":true,"lstrip":true,"rstrip":true,"single_word":true,"normalized":true}]})";
  }
  try {
    const auto tok = hf_json::parse_tokenizer_json(doc);
    const std::uint8_t text[] = {0x00, 'a', 'b', ' ', '<', 'x', '>', ' ', 0xC3, 0xA9, 0x1F, 'b'};
    fuzz::fuzz_one(*tok, text, sizeof(text));
  } catch (const onepass::Error&) {
  }
  return 0;
}
