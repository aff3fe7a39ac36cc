// WordPiece: greedy longest-match-first over a word, continuation pieces carry a prefix
// ("##"); a word with an unmatched remainder, or longer than max_input_chars_per_word code
// points, becomes the single unk token (the crate's models/wordpiece).
#include "base/error.h"
#include "tokenizer/common/unicode.h"
#include "tokenizer/hf_json/model.h"

namespace onepass::tokenizer::hf_json {
namespace {

class WordPiece final : public Model {
 public:
  explicit WordPiece(const Json& j) {
    parse_vocab(require(j, "WordPiece", "vocab"), "WordPiece", vocab_, by_id_);
    unk_token_ = get_string_or(j, "WordPiece", "unk_token", "[UNK]");
    prefix_ = get_string_or(j, "WordPiece", "continuing_subword_prefix", "##");
    if (j.contains("max_input_chars_per_word") && !j.at("max_input_chars_per_word").is_null())
      max_chars_ = static_cast<std::size_t>(get_int(j, "WordPiece", "max_input_chars_per_word"));
  }

  void tokenize(std::u32string_view text, std::vector<Token>& out) const override {
    const auto n = static_cast<std::uint32_t>(text.size());
    if (n > max_chars_) {
      out.push_back(unk(n));
      return;
    }
    // UTF-8 of the word and the byte offset of every code point.
    std::string word;
    std::vector<std::size_t> at;
    at.reserve(n + 1);
    for (char32_t c : text) {
      at.push_back(word.size());
      unicode::append_utf8(c, word);
    }
    at.push_back(word.size());

    const std::size_t first = out.size();
    std::string buffer;
    std::uint32_t start = 0;
    while (start < n) {
      std::uint32_t end = n;
      bool found = false;
      while (start < end) {
        std::string_view piece(word.data() + at[start], at[end] - at[start]);
        std::optional<std::int32_t> id;
        if (start > 0) {
          buffer.assign(prefix_);
          buffer.append(piece);
          id = find_id(vocab_, buffer);
          piece = buffer;
        } else {
          id = find_id(vocab_, piece);
        }
        if (id) {
          out.push_back(Token{*id, std::string(piece), start, end});
          found = true;
          break;
        }
        --end;
      }
      if (!found) {
        out.resize(first);
        out.push_back(unk(n));
        return;
      }
      start = end;
    }
  }

  std::optional<std::int32_t> token_to_id(std::string_view token) const override {
    return find_id(vocab_, token);
  }
  std::optional<std::string> id_to_token(std::int32_t id) const override {
    if (id < 0 || static_cast<std::size_t>(id) >= by_id_.size()) return std::nullopt;
    return by_id_[static_cast<std::size_t>(id)];
  }
  std::size_t vocab_size() const override { return vocab_.size(); }
  std::string_view kind() const override { return "WordPiece"; }
  std::string_view continuing_subword_prefix() const override { return prefix_; }

 private:
  Token unk(std::uint32_t n) const {
    const auto id = find_id(vocab_, unk_token_);
    if (!id)
      throw Error(ErrorKind::kInvalidInput,
                  "tokenizer.json WordPiece: unk token '" + unk_token_ + "' is not in the vocab");
    return Token{*id, unk_token_, 0, n};
  }

  Vocab vocab_;
  std::vector<std::string> by_id_;
  std::string unk_token_;
  std::string prefix_;
  std::size_t max_chars_ = 100;
};

}  // namespace

std::unique_ptr<Model> make_wordpiece(const Json& j) { return std::make_unique<WordPiece>(j); }

}  // namespace onepass::tokenizer::hf_json
