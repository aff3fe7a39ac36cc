// Entry points of the tokenizer.json source beyond load_tokenizer_json (sources.h): parsing from
// memory serves the fuzzers and tests.
#pragma once

#include <memory>
#include <nlohmann/json.hpp>
#include <string_view>

#include "tokenizer/tokenizer.h"

namespace onepass::tokenizer::hf_json {

// Throws onepass::Error: kInvalidModel for malformed JSON or fields, kUnsupported naming a
// component onepass lacks. `source_kind` is what the tokenizer reports as its source
// (Tokenizer::source_kind): "bpe_files" when the document was built from vocab.json + merges.txt.
std::unique_ptr<Tokenizer> parse_tokenizer_json(std::string_view json_text,
                                                std::string_view source_kind = "tokenizer.json");

// The same from a document already in memory (the BPE-files source builds one).
std::unique_ptr<Tokenizer> make_tokenizer_json(const nlohmann::json& root,
                                               std::string_view source_kind);

}  // namespace onepass::tokenizer::hf_json
