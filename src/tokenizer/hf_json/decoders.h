// tokenizer.json decoders: token strings back to text, as the `tokenizers` library's decode()
// does after it has turned ids into tokens. Each decoder maps the list of tokens to a new list
// (the crate's decode_chain); the text is the last list joined without separators.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "tokenizer/hf_json/json_util.h"

namespace onepass::tokenizer::hf_json {

class Decoder {
 public:
  virtual ~Decoder() = default;
  virtual void decode_chain(std::vector<std::string>& tokens) const = 0;
};

// WordPiece, ByteLevel, Metaspace, BPEDecoder, Replace (string pattern), ByteFallback, Fuse,
// Strip, Sequence. Another type (or a Replace by regex) gives a decoder that throws
// Error(kUnsupported) naming it when used: a file whose decoder onepass lacks still encodes.
std::unique_ptr<Decoder> make_decoder(const Json& j);

// The decoder of a tokenizer.json without one: tokens joined by single spaces.
std::string join_without_decoder(const std::vector<std::string>& tokens);

// Bytes as UTF-8 text, each maximal invalid subsequence replaced by U+FFFD (Rust's
// String::from_utf8_lossy, which the ByteLevel and ByteFallback decoders use).
std::string utf8_lossy(std::string_view bytes);

}  // namespace onepass::tokenizer::hf_json
