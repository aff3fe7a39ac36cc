// What every transformers slow tokenizer shares (PreTrainedTokenizer, v4.47.1): the optional
// lowercasing of everything but the special tokens, the split on added tokens, then per text
// the model's _tokenize; truncate_sequences; build_inputs_with_special_tokens and the token type
// ids. A source (SentencePiece, WordPiece) supplies _tokenize and the base vocabulary.
// Immutable after construction; encode() is thread-safe.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "tokenizer/slow/added_token_splitter.h"
#include "tokenizer/slow/slow_config.h"
#include "tokenizer/tokenizer.h"

namespace onepass::tokenizer::slow {

// Hash for maps keyed by std::string that are looked up with string_views, without a copy.
struct StringViewHash {
  using is_transparent = void;
  std::size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
};
template <typename T>
using StringMap = std::unordered_map<std::string, T, StringViewHash, std::equal_to<>>;

// The tokens of one text before special tokens are added. Offsets are [start, end) code point
// indices of the original text. Word ids are those of the fast tokenizer transformers converts
// the slow one to (its pre-tokenizer's splits, counted from 0): push() adds a token to the open
// word; after end_word() the next push() opens a new one.
struct Segment {
  std::vector<std::int32_t> ids;
  std::vector<std::string> tokens;
  std::vector<std::pair<std::uint32_t, std::uint32_t>> offsets;
  std::vector<std::int32_t> word_ids;
  std::int32_t words = 0;  // words opened so far
  bool word_open = false;
  std::size_t size() const { return ids.size(); }
  void push(std::int32_t id, std::string token, std::uint32_t start, std::uint32_t end) {
    if (!word_open) {
      ++words;
      word_open = true;
    }
    ids.push_back(id);
    tokens.push_back(std::move(token));
    offsets.emplace_back(start, end);
    word_ids.push_back(words - 1);
  }
  void end_word() { word_open = false; }
  // Keeps the first n tokens (the open word stays open).
  void resize(std::size_t n) {
    ids.resize(n);
    tokens.resize(n);
    offsets.resize(n);
    word_ids.resize(n);
  }
};

// build_inputs_with_special_tokens / create_token_type_ids_from_sequences of a class.
// The token strings are the config's cls_token and sep_token.
struct SpecialLayout {
  bool double_sep_in_pair = false;   // XLM-R: <s> A </s></s> B </s>
  bool second_text_type_one = true;  // BERT, DeBERTa: B and its [SEP] get type id 1
};

class SlowTokenizer : public Tokenizer {
 public:
  Encoding encode(std::string_view text, std::optional<std::string_view> pair,
                  const TruncationOptions& truncation = {},
                  bool add_special_tokens = true) const override;
  std::size_t num_special_tokens(bool pair) const override;
  std::size_t vocab_size() const override;
  std::optional<std::int32_t> token_to_id(std::string_view token) const override;
  // PreTrainedTokenizer._decode: convert_ids_to_tokens, the non-special added tokens kept apart
  // from the class's convert_tokens_to_string and joined to it by spaces.
  std::string decode(std::span<const std::int32_t> ids, bool skip_special_tokens) const override;
  std::optional<std::int32_t> stand_in_for_id_past_vocabulary() const override { return unk_id_; }

  // PreTrainedTokenizer.tokenize + convert_tokens_to_ids for one text, without special tokens.
  Segment tokenize(std::string_view text) const;

 protected:
  SlowTokenizer() = default;
  // Completes construction; subclasses call it once their base vocabulary is loaded.
  // `lowercase_text` is PreTrainedTokenizer.tokenize's do_lower_case step.
  void init(SlowConfig config, const SpecialLayout& layout, std::size_t base_vocab_size,
            bool lowercase_text);

  // The class's _tokenize for one piece between added tokens, appending ids, the tokens that
  // convert_ids_to_tokens would give, and offsets.
  virtual void tokenize_piece(const TextPiece& piece, Segment& out) const = 0;
  // _convert_token_to_id of the base vocabulary (no added tokens); nullopt when unknown.
  virtual std::optional<std::int32_t> base_token_to_id(std::string_view token) const = 0;
  // The token string of a base vocabulary id (for the special tokens' strings).
  virtual std::string base_id_to_token(std::int32_t id) const = 0;

  // The class's convert_tokens_to_string.
  virtual std::string convert_tokens_to_string(const std::vector<std::string>& tokens) const = 0;
  // Whether `token` is one of all_special_tokens.
  bool is_special_token(std::string_view token) const;

  // convert_tokens_to_ids' first step: the added tokens, by content.
  std::optional<std::int32_t> added_token_id(std::string_view content) const;
  const SlowConfig& config() const { return config_; }
  std::int32_t unk_id() const { return unk_id_; }

 private:
  std::u32string lowercase_except_special(std::u32string_view text,
                                          std::vector<std::uint32_t>& source) const;

  SlowConfig config_;
  std::optional<AddedTokenSplitter> splitter_;
  StringMap<std::int32_t> added_ids_;
  std::vector<std::u32string> keep_case_;  // tokens the lowercasing step leaves alone
  SpecialLayout layout_;
  std::string cls_token_;
  std::string sep_token_;
  std::int32_t cls_id_ = 0;
  std::int32_t sep_id_ = 0;
  std::int32_t unk_id_ = 0;
  std::size_t vocab_size_ = 0;
  bool lowercase_text_ = false;
  // For decode(): _added_tokens_decoder, all_special_ids, and the added tokens _decode keeps out
  // of convert_tokens_to_string.
  std::unordered_map<std::int32_t, std::string> added_by_id_;
  std::set<std::int32_t> special_ids_;
  std::set<std::string, std::less<>> special_tokens_;
  std::set<std::string, std::less<>> legacy_added_;
};

}  // namespace onepass::tokenizer::slow
