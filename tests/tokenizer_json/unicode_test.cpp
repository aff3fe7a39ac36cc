// Unicode helpers: strict UTF-8, BERT character classes, normalization with source indices.
#include "tokenizer/common/unicode.h"

#include <gtest/gtest.h>

#include <string>

#include "base/error.h"

namespace onepass::tokenizer::unicode {
namespace {

void expect_invalid(std::string_view bytes) {
  try {
    validate_utf8(bytes);
    ADD_FAILURE() << "accepted invalid UTF-8";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kInvalidInput);
    EXPECT_NE(std::string(e.what()).find("invalid UTF-8"), std::string::npos);
  }
}

TEST(Utf8, DecodesWithByteOffsets) {
  std::vector<std::uint32_t> offsets;
  const auto cps = decode_utf8("a\xC3\xA9\xE4\xB8\xAD\xF0\x9F\x98\x80", &offsets);
  EXPECT_EQ(cps, (std::u32string{U'a', 0xE9, 0x4E2D, 0x1F600}));
  EXPECT_EQ(offsets, (std::vector<std::uint32_t>{0, 1, 3, 6, 10}));
  EXPECT_EQ(encode_utf8(cps), "a\xC3\xA9\xE4\xB8\xAD\xF0\x9F\x98\x80");
  EXPECT_EQ(decode_utf8(""), U"");
}

TEST(Utf8, RejectsMalformedInput) {
  expect_invalid("\x80");                                          // stray continuation byte
  expect_invalid("ab\xC3");                                        // truncated at the end
  expect_invalid("\xE4\xB8x");                                     // truncated inside
  expect_invalid("\xC0\xAF");                                      // overlong '/'
  expect_invalid("\xE0\x80\xAF");                                  // overlong, 3 bytes
  expect_invalid("\xF0\x80\x80\xAF");                              // overlong, 4 bytes
  expect_invalid("\xED\xA0\x80");                                  // surrogate U+D800
  expect_invalid("\xF4\x90\x80\x80");                              // above U+10FFFF
  expect_invalid("\xFF");                                          // never valid
  EXPECT_NO_THROW(validate_utf8("\xEF\xBF\xBF\xF4\x8F\xBF\xBF"));  // U+FFFF, U+10FFFF
}

TEST(Classes, MatchBertDefinitions) {
  EXPECT_TRUE(is_bert_whitespace(U' '));
  EXPECT_TRUE(is_bert_whitespace(0x3000));
  EXPECT_TRUE(is_bert_whitespace(0xA0));
  EXPECT_FALSE(is_bert_whitespace(0x2028));  // Zl is not Zs
  EXPECT_FALSE(is_bert_whitespace(0x85));
  EXPECT_TRUE(is_white_space(0x2028));
  EXPECT_TRUE(is_white_space(0x85));
  EXPECT_TRUE(is_white_space(0x0B));
  EXPECT_FALSE(is_white_space(0xFEFF));
  EXPECT_FALSE(is_white_space(0x200B));
  EXPECT_FALSE(is_control(U'\t'));
  EXPECT_TRUE(is_control(0x00));
  EXPECT_TRUE(is_control(0x200B));  // Cf
  EXPECT_TRUE(is_control(0xE000));  // Co
  EXPECT_TRUE(is_control(0x0378));  // Cn
  EXPECT_FALSE(is_control(U'a'));
  EXPECT_TRUE(is_punctuation(U'$'));  // ASCII symbol counts as punctuation for BERT
  EXPECT_TRUE(is_punctuation(U'^'));
  EXPECT_TRUE(is_punctuation(0x3001));   // 、 Po
  EXPECT_TRUE(is_punctuation(0x00BF));   // ¿ Po
  EXPECT_FALSE(is_punctuation(0x20AC));  // € is Sc, not ASCII
  EXPECT_TRUE(is_chinese_char(0x4E2D));
  EXPECT_TRUE(is_chinese_char(0x2B820));
  EXPECT_FALSE(is_chinese_char_rust(0x2B820));
  EXPECT_FALSE(is_chinese_char(0x3042));  // hiragana
  EXPECT_FALSE(is_chinese_char(0xAC00));  // hangul
  EXPECT_TRUE(is_nonspacing_mark(0x301));
  EXPECT_TRUE(is_word_char(0x200D));
  EXPECT_TRUE(is_word_char(U'_'));
  EXPECT_FALSE(is_word_char(U'-'));
  EXPECT_TRUE(is_word_char(0x24B6));   // Ⓐ: So, but Other_Alphabetic
  EXPECT_FALSE(is_word_char(0x2460));  // ①: No
}

TEST(Normalize, FormsAndSourceIndex) {
  std::vector<std::uint32_t> src;
  // é precomposed, then e + combining acute.
  EXPECT_EQ(normalize(U"\u00E9e\u0301", NormalForm::kNFD, &src), U"e\u0301e\u0301");
  EXPECT_EQ(src, (std::vector<std::uint32_t>{0, 0, 1, 2}));
  EXPECT_EQ(normalize(U"\u00E9e\u0301", NormalForm::kNFC, &src), U"\u00E9\u00E9");
  EXPECT_EQ(src, (std::vector<std::uint32_t>{0, 1}));
  // Compatibility: ﬁ ligature and full-width A; ² is a compatibility superscript.
  EXPECT_EQ(normalize(U"\uFB01\uFF21\u00B2", NormalForm::kNFKC, &src), U"fiA2");
  EXPECT_EQ(src, (std::vector<std::uint32_t>{0, 0, 1, 2}));
  EXPECT_EQ(normalize(U"\uFB01", NormalForm::kNFC), U"\uFB01");
  // Hangul syllables decompose into jamo and compose back.
  EXPECT_EQ(normalize(U"\uD55C", NormalForm::kNFD), U"\u1112\u1161\u11AB");
  EXPECT_EQ(normalize(U"\u1112\u1161\u11AB", NormalForm::kNFC), U"\uD55C");
  // Canonical ordering: dot below (220) sorts before acute (230).
  EXPECT_EQ(normalize(U"a\u0301\u0323", NormalForm::kNFD, &src), U"a\u0323\u0301");
  EXPECT_EQ(src, (std::vector<std::uint32_t>{0, 2, 1}));
}

TEST(Normalize, StripAccentsAndLowercase) {
  std::vector<std::uint32_t> src;
  EXPECT_EQ(strip_accents(U"Caf\u00E9 n\u0303", &src), U"Cafe n");
  EXPECT_EQ(src, (std::vector<std::uint32_t>{0, 1, 2, 3, 4, 5}));
  EXPECT_EQ(lowercase(U"\u0130A\u00C9\u0416", false, &src), U"i\u0307a\u00E9\u0436");
  EXPECT_EQ(src, (std::vector<std::uint32_t>{0, 0, 1, 2, 3}));
  EXPECT_EQ(lowercase(U"\u039F\u0394\u039F\u03A3 \u03A3", true),
            U"\u03BF\u03B4\u03BF\u03C2 \u03C3");
  EXPECT_EQ(lowercase(U"\u039F\u0394\u039F\u03A3", false), U"\u03BF\u03B4\u03BF\u03C3");
}

}  // namespace
}  // namespace onepass::tokenizer::unicode
