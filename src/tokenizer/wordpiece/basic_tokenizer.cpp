#include "tokenizer/wordpiece/basic_tokenizer.h"

#include <algorithm>

#include "tokenizer/common/unicode.h"

namespace onepass::tokenizer::wordpiece {
namespace {

// Carries spans through a text transformation whose output k came from input src[k]: an output
// covers its input up to the input the next output came from (inputs that vanished, such as
// stripped accents, stay with the character before them).
std::vector<Span> carry_spans(const std::vector<Span>& in, const std::vector<std::uint32_t>& src) {
  std::vector<Span> out(src.size());
  for (std::size_t k = 0; k < src.size(); ++k) {
    const std::size_t first = src[k];
    std::size_t last = first;
    if (k + 1 < src.size()) {
      if (src[k + 1] > first) last = src[k + 1] - 1;
    } else {
      last = std::max(first, in.size() - 1);
    }
    out[k] = {in[first].first, std::max(in[first].second, in[last].second)};
  }
  return out;
}

void transform(Word& word, std::u32string text, const std::vector<std::uint32_t>& src) {
  word.spans = carry_spans(word.spans, src);
  word.text = std::move(text);
}

// Code points below U+0300 are all NFC-stable and compose with nothing before them, so a word
// made only of them is its own NFC.
bool may_change_under_nfc(const std::u32string& text) {
  return std::any_of(text.begin(), text.end(), [](char32_t cp) { return cp >= 0x300; });
}

}  // namespace

void BasicTokenizer::tokenize(const slow::TextPiece& piece, std::vector<Word>& out) const {
  // _clean_text and _tokenize_chinese_chars, then the whitespace split. NFC runs per word: no
  // canonical composition or reordering crosses a space, so this equals NFC of the whole text.
  Word word;
  auto flush = [&] {
    if (!word.text.empty()) finish_word(std::move(word), out);
    word = Word{};
  };
  for (std::size_t i = 0; i < piece.text.size(); ++i) {
    const char32_t cp = piece.text[i];
    const Span span{piece.source[i], piece.source[i] + 1};
    if (cp == 0 || cp == 0xFFFD || unicode::is_control(cp)) continue;
    if (unicode::is_bert_whitespace(cp) || unicode::is_python_space(cp)) {
      flush();
      continue;
    }
    if (options_.tokenize_chinese_chars && unicode::is_chinese_char(cp)) {
      flush();
      word.text.push_back(cp);
      word.spans.push_back(span);
      flush();
      continue;
    }
    word.text.push_back(cp);
    word.spans.push_back(span);
  }
  flush();
}

void BasicTokenizer::finish_word(Word word, std::vector<Word>& out) const {
  std::vector<std::uint32_t> src;
  if (may_change_under_nfc(word.text)) {
    std::u32string nfc = unicode::normalize(word.text, unicode::NormalForm::kNFC, &src);
    transform(word, std::move(nfc), src);
  }
  if (options_.never_split.count(word.text)) {
    out.push_back(std::move(word));
    return;
  }
  const bool strip = options_.do_lower_case ? options_.strip_accents.value_or(true)
                                            : options_.strip_accents.value_or(false);
  if (options_.do_lower_case) {
    // token.lower(): Python's full lowercase of the word, final sigma included.
    std::u32string lowered = unicode::lowercase(word.text, true, &src);
    transform(word, std::move(lowered), src);
  }
  if (strip) {
    std::u32string stripped = unicode::strip_accents(word.text, &src);
    transform(word, std::move(stripped), src);
  }
  // _run_split_on_punc leaves a word that (now) is in never_split whole.
  if (options_.never_split.count(word.text)) {
    if (!word.text.empty()) out.push_back(std::move(word));
    return;
  }
  Word run;
  auto flush = [&] {
    if (!run.text.empty()) out.push_back(std::move(run));
    run = Word{};
  };
  for (std::size_t i = 0; i < word.text.size(); ++i) {
    if (unicode::is_punctuation(word.text[i])) {
      flush();
      run.text.push_back(word.text[i]);
      run.spans.push_back(word.spans[i]);
      flush();
    } else {
      run.text.push_back(word.text[i]);
      run.spans.push_back(word.spans[i]);
    }
  }
  flush();
}

void split_on_python_whitespace(const slow::TextPiece& piece, std::vector<Word>& out) {
  Word word;
  for (std::size_t i = 0; i < piece.text.size(); ++i) {
    if (unicode::is_python_space(piece.text[i])) {
      if (!word.text.empty()) out.push_back(std::move(word));
      word = Word{};
      continue;
    }
    word.text.push_back(piece.text[i]);
    word.spans.emplace_back(piece.source[i], piece.source[i] + 1);
  }
  if (!word.text.empty()) out.push_back(std::move(word));
}

}  // namespace onepass::tokenizer::wordpiece
