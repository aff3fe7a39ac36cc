// tokenizer.json models (WordPiece, Unigram, BPE): one pre-tokenized split in, tokens out.
// Models are immutable after load; tokenize() is thread-safe.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "tokenizer/hf_json/json_util.h"
#include "tokenizer/hf_json/pre_tokenizers.h"

namespace onepass::tokenizer::hf_json {

struct StringHash {
  using is_transparent = void;
  std::size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
};
// token -> id with lookups by string_view (no temporary strings on the hot path).
using Vocab = std::unordered_map<std::string, std::int32_t, StringHash, std::equal_to<>>;

inline std::optional<std::int32_t> find_id(const Vocab& vocab, std::string_view token) {
  const auto it = vocab.find(token);
  if (it == vocab.end()) return std::nullopt;
  return it->second;
}

class Model {
 public:
  virtual ~Model() = default;
  // Appends the tokens of `text` (one split's normalized text) to `out`; offsets are code points
  // of `text`. Throws Error(kInvalidInput) where the crate returns an error (e.g. an unknown
  // piece while the model has no unk token).
  virtual void tokenize(std::u32string_view text, std::vector<Token>& out) const = 0;
  virtual std::optional<std::int32_t> token_to_id(std::string_view token) const = 0;
  virtual std::optional<std::string> id_to_token(std::int32_t id) const = 0;
  virtual std::size_t vocab_size() const = 0;
  virtual std::string_view kind() const = 0;
  virtual std::string_view continuing_subword_prefix() const { return {}; }
};

// The largest vocabulary id onepass takes (2^22 - 1, four times the largest vocabularies in
// use): `by_id` is sized by the largest id, so one stray huge id in a file must be a clear
// error, not gigabytes of memory.
inline constexpr std::int32_t kMaxVocabId = (1 << 22) - 1;

// Reads a {"token": id} object (WordPiece and BPE `vocab`) into `vocab` and its inverse `by_id`
// (ids need not be dense: gaps stay empty strings). `where` names the model in errors.
void parse_vocab(const Json& vocab_json, std::string_view where, Vocab& vocab,
                 std::vector<std::string>& by_id);

// Dispatches on "type" (WordPiece, Unigram, BPE); anything else is Error(kUnsupported).
std::unique_ptr<Model> make_model(const Json& j);
std::unique_ptr<Model> make_wordpiece(const Json& j);
std::unique_ptr<Model> make_unigram(const Json& j);
std::unique_ptr<Model> make_bpe(const Json& j);

}  // namespace onepass::tokenizer::hf_json
