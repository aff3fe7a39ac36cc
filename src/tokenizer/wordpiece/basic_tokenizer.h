// transformers' BasicTokenizer (models/bert/tokenization_bert.py, v4.47.1): the word splitting
// that BertTokenizer runs before WordPiece. In order: drop NUL, U+FFFD and control characters
// and turn BERT whitespace into spaces (_clean_text); surround CJK ideographs with spaces; NFC
// (the slow tokenizer does this, the tokenizer.json BertNormalizer does not); split on Python
// whitespace; per word (unless it is in never_split) lowercase with Python's str.lower() and
// strip accents as configured; split off every punctuation character.
// Each output character keeps the [start, end) code point span of the input it came from.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <unordered_set>
#include <utility>
#include <vector>

#include "tokenizer/slow/added_token_splitter.h"

namespace onepass::tokenizer::wordpiece {

using Span = std::pair<std::uint32_t, std::uint32_t>;

struct Word {
  std::u32string text;
  std::vector<Span> spans;  // one per code point of text
};

struct BasicTokenizerOptions {
  bool do_lower_case = true;
  std::optional<bool> strip_accents;  // unset: follows do_lower_case
  bool tokenize_chinese_chars = true;
  // never_split of the constructor plus the special tokens tokenize() passes in.
  std::unordered_set<std::u32string> never_split;
};

class BasicTokenizer {
 public:
  explicit BasicTokenizer(BasicTokenizerOptions options) : options_(std::move(options)) {}

  // Appends the words of one text piece (between added tokens) to `out`.
  void tokenize(const slow::TextPiece& piece, std::vector<Word>& out) const;

 private:
  void finish_word(Word word, std::vector<Word>& out) const;

  BasicTokenizerOptions options_;
};

// whitespace_tokenize(): split on Python whitespace (str.split()), for do_basic_tokenize=False.
void split_on_python_whitespace(const slow::TextPiece& piece, std::vector<Word>& out);

}  // namespace onepass::tokenizer::wordpiece
