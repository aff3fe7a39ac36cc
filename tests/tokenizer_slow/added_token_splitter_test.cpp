// The added-token split of the slow tokenizers: Trie.split cases worked out by hand from
// transformers' own documentation and tests of the Trie, then the whitespace rules of
// PreTrainedTokenizer.tokenize (lstrip / rstrip with Python's str.isspace, single_word).
#include "tokenizer/slow/added_token_splitter.h"

#include <gtest/gtest.h>

#include "tokenizer/common/unicode.h"

namespace onepass::tokenizer::slow {
namespace {

AddedTokenSpec token(std::string content, bool lstrip = false, bool rstrip = false,
                     bool single_word = false) {
  AddedTokenSpec spec;
  spec.content = std::move(content);
  spec.lstrip = lstrip;
  spec.rstrip = rstrip;
  spec.single_word = single_word;
  spec.special = true;
  return spec;
}

std::vector<std::string> cuts(const std::vector<AddedTokenSpec>& tokens, std::string_view text) {
  AddedTokenSplitter splitter(tokens);
  const std::u32string decoded = unicode::decode_utf8(text);
  std::vector<std::string> out;
  for (const auto& [start, end] : splitter.trie_cuts(decoded)) {
    out.push_back(unicode::encode_utf8(std::u32string_view(decoded).substr(start, end - start)));
  }
  return out;
}

// The pieces after the whitespace rules; added tokens are shown as <<content>>.
std::vector<std::string> pieces(const std::vector<AddedTokenSpec>& tokens, std::string_view text) {
  AddedTokenSplitter splitter(tokens);
  std::vector<std::string> out;
  for (const auto& piece : splitter.split(unicode::decode_utf8(text))) {
    const std::string utf8 = unicode::encode_utf8(piece.text);
    out.push_back(piece.added >= 0 ? "<<" + utf8 + ">>" : utf8);
  }
  return out;
}

using Strings = std::vector<std::string>;

TEST(TrieSplit, NoTokensKeepsTheText) {
  EXPECT_EQ(cuts({}, "[CLS] This is a extra_id_100"), Strings{"[CLS] This is a extra_id_100"});
  EXPECT_EQ(cuts({}, ""), Strings{});
}

TEST(TrieSplit, LongestMatchWins) {
  const std::vector<AddedTokenSpec> tokens{token("[CLS]"), token("extra_id_1"),
                                           token("extra_id_100")};
  EXPECT_EQ(cuts(tokens, "[CLS] This is a extra_id_100"),
            (Strings{"[CLS]", " This is a ", "extra_id_100"}));
  EXPECT_EQ(cuts(tokens, "extra_id_1 and extra_id_10"),
            (Strings{"extra_id_1", " and ", "extra_id_1", "0"}));
}

TEST(TrieSplit, TokensAtBothEnds) {
  EXPECT_EQ(cuts({token("A")}, "ABC"), (Strings{"A", "BC"}));
  EXPECT_EQ(cuts({token("A")}, "BCA"), (Strings{"BC", "A"}));
  EXPECT_EQ(cuts({token("A")}, "AA"), (Strings{"A", "A"}));
}

TEST(TrieSplit, PartialMatchThatFailsRestartsLater) {
  // "blower": "blowing" fails at "e" while "lower", started one character later, matches.
  EXPECT_EQ(cuts({token("blowing"), token("lower")}, "blower"), (Strings{"b", "lower"}));
  EXPECT_EQ(cuts({token("TOKEN]"), token("[SPECIAL_TOKEN]")}, "This is something [SPECIAL_TOKEN]"),
            (Strings{"This is something ", "[SPECIAL_TOKEN]"}));
  EXPECT_EQ(
      cuts({token("A"), token("P"), token("[SPECIAL_TOKEN]")}, "This is something [SPECIAL_TOKEN]"),
      (Strings{"This is something ", "[SPECIAL_TOKEN]"}));
}

TEST(TrieSplit, EarlierStartBeatsAShorterLaterMatch) {
  // At "C" the match "B" is complete, but the earlier partial "AB" extends and wins.
  EXPECT_EQ(cuts({token("AB"), token("B"), token("C")}, "ABC"), (Strings{"AB", "C"}));
  // "ABC" starts first and is taken whole; "CD" would have overlapped it.
  EXPECT_EQ(cuts({token("ABC"), token("B"), token("CD")}, "ABCD"), (Strings{"ABC", "D"}));
}

TEST(TrieSplit, CodePointsNotBytes) {
  EXPECT_EQ(cuts({token("<mask>")}, "été<mask>ça"), (Strings{"été", "<mask>", "ça"}));
  EXPECT_EQ(cuts({token("友達")}, "Hello 友達!"), (Strings{"Hello ", "友達", "!"}));
}

TEST(AddedTokenWhitespace, LstripEatsPythonWhitespaceOnTheLeft) {
  const std::vector<AddedTokenSpec> tokens{token("<mask>", /*lstrip=*/true)};
  EXPECT_EQ(pieces(tokens, "a <mask> b"), (Strings{"a", "<<<mask>>>", " b"}));
  // U+0085 and U+3000 are whitespace to Python; U+200B and U+FEFF are not.
  EXPECT_EQ(pieces(tokens, "a \u0085\u3000<mask>"), (Strings{"a", "<<<mask>>>"}));
  EXPECT_EQ(pieces(tokens, "a\u200b <mask>"), (Strings{"a\u200b", "<<<mask>>>"}));
  EXPECT_EQ(pieces(tokens, "a\ufeff\t<mask>"), (Strings{"a\ufeff", "<<<mask>>>"}));
  // The separators U+001C..U+001F count as whitespace too; a piece stripped to nothing goes.
  EXPECT_EQ(pieces(tokens, "\x1c <mask>x"), (Strings{"<<<mask>>>", "x"}));
}

TEST(AddedTokenWhitespace, RstripEatsWhitespaceOnTheRight) {
  const std::vector<AddedTokenSpec> tokens{token("[X]", false, /*rstrip=*/true), token("[Y]")};
  EXPECT_EQ(pieces(tokens, "a [X] \n b [Y] c"), (Strings{"a ", "<<[X]>>", "b ", "<<[Y]>>", " c"}));
}

TEST(AddedTokenWhitespace, SingleWordGluesToANeighbourWithoutSpace) {
  const std::vector<AddedTokenSpec> tokens{token("ab", false, false, /*single_word=*/true)};
  EXPECT_EQ(pieces(tokens, "x ab y"), (Strings{"x ", "<<ab>>", " y"}));
  EXPECT_EQ(pieces(tokens, "xab y"), (Strings{"xab", " y"}));
  EXPECT_EQ(pieces(tokens, "x aby"), (Strings{"x ", "aby"}));
}

TEST(AddedTokenWhitespace, SourcesFollowStrippingAndGluing) {
  AddedTokenSplitter splitter({token("<mask>", true)});
  const auto out = splitter.split(unicode::decode_utf8("ab  <mask>c"));
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(out[0].source, (std::vector<std::uint32_t>{0, 1}));
  EXPECT_EQ(out[1].source, (std::vector<std::uint32_t>{4, 5, 6, 7, 8, 9}));
  EXPECT_EQ(out[1].added, 0);
  EXPECT_EQ(out[2].source, (std::vector<std::uint32_t>{10}));
}

}  // namespace
}  // namespace onepass::tokenizer::slow
