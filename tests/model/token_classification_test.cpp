// The token-classification pipeline's post-processing (model/heads/token_classification.h)
// against cases worked by hand from transformers v4.47.1's pipelines/token_classification.py:
// each aggregation strategy, sub-word detection of both kinds, the `max` and `average` ties,
// unknown tokens, code-point offsets in CJK and accented text, ignore_labels and bad input.
#include "model/heads/token_classification.h"

#include <gtest/gtest.h>

#include <cmath>

#include "base/error.h"

namespace onepass::model::heads {
namespace {

const std::vector<std::string> kLabels{"O", "B-PER", "I-PER", "B-LOC", "I-LOC"};

// One token: its vocabulary string, id, code-point span, logits and whether it is special.
struct Tok {
  std::string token;
  std::int32_t id;
  std::uint32_t start, end;
  std::vector<float> logits;
  bool special = false;
};

struct Case {
  std::string text;
  std::vector<Tok> toks;
  std::vector<float> logits;
  std::vector<std::int32_t> ids;
  std::vector<std::string> tokens;
  std::vector<std::pair<std::uint32_t, std::uint32_t>> offsets;
  std::vector<std::uint8_t> special;

  TokenizedSequence view() {
    logits.clear();
    ids.clear();
    tokens.clear();
    offsets.clear();
    special.clear();
    for (const auto& t : toks) {
      logits.insert(logits.end(), t.logits.begin(), t.logits.end());
      ids.push_back(t.id);
      tokens.push_back(t.token);
      offsets.emplace_back(t.start, t.end);
      special.push_back(t.special ? 1 : 0);
    }
    return {text, logits, ids, tokens, offsets, special};
  }
};

const std::vector<float> kSpecial{0, 0, 0, 0, 0};

// softmax of a row holding `top` at one place and 0 at the other four: the top probability.
float top_of(float top) { return std::exp(top) / (std::exp(top) + 4.0f); }
float rest_of(float top) { return 1.0f / (std::exp(top) + 4.0f); }

// "Hi Jon Smithson lives in Paris" through a WordPiece vocabulary ("##" sub-words).
Case wordpiece_case() {
  Case c;
  c.text = "Hi Jon Smithson lives in Paris";
  c.toks = {
      {"[CLS]", 12, 0, 0, kSpecial, true},    {"Hi", 20, 0, 2, {5, 0, 0, 0, 0}},
      {"Jon", 21, 3, 6, {0, 4, 0, 0, 0}},     {"Smith", 22, 7, 12, {0, 0, 3, 0, 0}},
      {"##son", 23, 12, 15, {0, 0, 1, 2, 0}},  // a sub-word that disagrees with its word
      {"lives", 24, 16, 21, {5, 0, 0, 0, 0}}, {"in", 25, 22, 24, {5, 0, 0, 0, 0}},
      {"Par", 26, 25, 28, {0, 0, 0, 3, 0}},   // B-LOC ...
      {"##is", 27, 28, 30, {0, 3, 0, 0, 0}},  // ... and B-PER with the same top probability
      {"[SEP]", 13, 0, 0, kSpecial, true},
  };
  return c;
}

TokenTextStyle wordpiece_style() { return {"##", false, 11}; }

TEST(TokenClassification, NoneListsEveryTokenNotIgnored) {
  Case c = wordpiece_case();
  const auto e = extract_entities(c.view(), kLabels, wordpiece_style(), Aggregation::kNone, {"O"});
  ASSERT_EQ(e.size(), 5u);
  EXPECT_EQ(e[0].label, "B-PER");
  EXPECT_EQ(e[0].word, "Jon");
  EXPECT_EQ(*e[0].index, 2u);  // special tokens count in the index
  EXPECT_EQ(e[0].start, 3u);
  EXPECT_EQ(e[0].end, 6u);
  EXPECT_NEAR(e[0].score, top_of(4), 1e-6);
  EXPECT_EQ(e[2].label, "B-LOC");
  EXPECT_EQ(e[2].word, "##son");  // the raw token, prefix and all
  const float z = std::exp(1.0f) + std::exp(2.0f) + 3.0f;
  EXPECT_NEAR(e[2].score, std::exp(2.0f) / z, 1e-6);
  EXPECT_EQ(e[4].label, "B-PER");
  EXPECT_EQ(*e[4].index, 8u);
  // An empty ignore list keeps the O tokens too.
  EXPECT_EQ(extract_entities(c.view(), kLabels, wordpiece_style(), Aggregation::kNone, {}).size(),
            8u);
}

TEST(TokenClassification, SimpleGroupsBThenIAndSplitsOnB) {
  Case c = wordpiece_case();
  const auto e =
      extract_entities(c.view(), kLabels, wordpiece_style(), Aggregation::kSimple, {"O"});
  // Jon(B-PER) Smith(I-PER) | ##son(B-LOC) | Par(B-LOC) | ##is(B-PER)
  ASSERT_EQ(e.size(), 4u);
  EXPECT_EQ(e[0].label, "PER");
  EXPECT_EQ(e[0].word, "Jon Smith");
  EXPECT_EQ(e[0].start, 3u);
  EXPECT_EQ(e[0].end, 12u);
  EXPECT_FALSE(e[0].index.has_value());
  EXPECT_NEAR(e[0].score, (top_of(4) + top_of(3)) / 2, 1e-6);
  EXPECT_EQ(e[1].label, "LOC");
  EXPECT_EQ(e[1].word, "##son");  // a group's first token keeps its prefix (the pipeline's quirk)
  EXPECT_EQ(e[2].word, "Par");
  EXPECT_EQ(e[3].label, "PER");
  EXPECT_EQ(e[3].word, "##is");
}

TEST(TokenClassification, FirstTakesTheFirstTokensLabelForTheWord) {
  Case c = wordpiece_case();
  const auto e = extract_entities(c.view(), kLabels, wordpiece_style(), Aggregation::kFirst, {"O"});
  ASSERT_EQ(e.size(), 2u);
  EXPECT_EQ(e[0].label, "PER");
  EXPECT_EQ(e[0].word, "Jon Smithson");
  EXPECT_EQ(e[0].start, 3u);
  EXPECT_EQ(e[0].end, 15u);
  EXPECT_NEAR(e[0].score, (top_of(4) + top_of(3)) / 2, 1e-6);
  EXPECT_EQ(e[1].label, "LOC");
  EXPECT_EQ(e[1].word, "Paris");
  EXPECT_EQ(e[1].start, 25u);
  EXPECT_EQ(e[1].end, 30u);
  EXPECT_NEAR(e[1].score, top_of(3), 1e-6);
}

TEST(TokenClassification, MaxKeepsTheFirstTokenOnATie) {
  Case c = wordpiece_case();
  const auto e = extract_entities(c.view(), kLabels, wordpiece_style(), Aggregation::kMax, {"O"});
  ASSERT_EQ(e.size(), 2u);
  EXPECT_EQ(e[0].word, "Jon Smithson");  // Smith (0.83) beats ##son (0.56): I-PER
  EXPECT_EQ(e[0].label, "PER");
  // Par (B-LOC) and ##is (B-PER) share the top probability: Python's max keeps the first.
  EXPECT_EQ(e[1].label, "LOC");
  EXPECT_EQ(e[1].word, "Paris");
  EXPECT_NEAR(e[1].score, top_of(3), 1e-6);
}

TEST(TokenClassification, AverageTakesTheFirstLabelOnATie) {
  Case c = wordpiece_case();
  const auto e =
      extract_entities(c.view(), kLabels, wordpiece_style(), Aggregation::kAverage, {"O"});
  ASSERT_EQ(e.size(), 2u);
  const float z = std::exp(1.0f) + std::exp(2.0f) + 3.0f;
  EXPECT_EQ(e[0].label, "PER");
  EXPECT_NEAR(e[0].score, ((top_of(3) + std::exp(1.0f) / z) / 2 + top_of(4)) / 2, 1e-6);
  // Paris: mean B-PER = mean B-LOC = (top + rest) / 2; argmax keeps index 1, B-PER.
  EXPECT_EQ(e[1].label, "PER");
  EXPECT_EQ(e[1].word, "Paris");
  EXPECT_NEAR(e[1].score, (top_of(3) + rest_of(3)) / 2, 1e-6);
}

TEST(TokenClassification, SentencePieceWordsFromSpacesAndMetaspaceText) {
  // XLM-R style: no continuing_subword_prefix, so a token continues a word when neither the
  // character before it nor its first one is a space.
  Case c;
  c.text = "Ana vive em Lisboa";
  c.toks = {
      {"<s>", 0, 0, 0, kSpecial, true},
      {"\xE2\x96\x81"
       "Ana",
       10,
       0,
       3,
       {0, 3, 0, 0, 0}},
      {"\xE2\x96\x81"
       "vi",
       11,
       4,
       6,
       {3, 0, 0, 0, 0}},
      {"ve", 12, 6, 8, {0, 0, 0, 3, 0}},  // a sub-word of "vive" tagged B-LOC
      {"\xE2\x96\x81"
       "em",
       13,
       9,
       11,
       {3, 0, 0, 0, 0}},
      {"\xE2\x96\x81"
       "Lis",
       14,
       12,
       15,
       {0, 0, 0, 3, 0}},
      {"boa", 15, 15, 18, {0, 0, 0, 0, 3}},
      {"</s>", 2, 0, 0, kSpecial, true},
  };
  const TokenTextStyle style{"", true, 3};
  const auto simple = extract_entities(c.view(), kLabels, style, Aggregation::kSimple, {"O"});
  ASSERT_EQ(simple.size(), 3u);
  EXPECT_EQ(simple[0].word, "Ana");
  EXPECT_EQ(simple[1].word, "ve");
  EXPECT_EQ(simple[2].label, "LOC");
  EXPECT_EQ(simple[2].word, "Lisboa");
  EXPECT_EQ(simple[2].start, 12u);
  EXPECT_EQ(simple[2].end, 18u);
  const auto first = extract_entities(c.view(), kLabels, style, Aggregation::kFirst, {"O"});
  ASSERT_EQ(first.size(), 2u);  // "vive" takes ▁vi's O
  EXPECT_EQ(first[0].word, "Ana");
  EXPECT_EQ(first[1].word, "Lisboa");
  const auto none = extract_entities(c.view(), kLabels, style, Aggregation::kNone, {"O"});
  ASSERT_EQ(none.size(), 4u);
  EXPECT_EQ(none[0].word,
            "\xE2\x96\x81"
            "Ana");
}

TEST(TokenClassification, CjkAndAccentsUseCodePointsAndUnknownTokensReadTheText) {
  Case c;
  c.text = "Él vive en 東京";
  c.toks = {
      {"[CLS]", 12, 0, 0, kSpecial, true},
      {"É", 30, 0, 1, {0, 0, 0, 3, 0}},
      {"##l", 31, 1, 2, {0, 0, 0, 0, 3}},
      {"vive", 32, 3, 7, {3, 0, 0, 0, 0}},
      {"en", 33, 8, 10, {3, 0, 0, 0, 0}},
      {"[UNK]", 11, 11, 12, {0, 0, 0, 3, 0}},  // 東 is outside the vocabulary
      {"京", 34, 12, 13, {0, 0, 0, 0, 3}},
      {"[SEP]", 13, 0, 0, kSpecial, true},
  };
  const auto simple =
      extract_entities(c.view(), kLabels, wordpiece_style(), Aggregation::kSimple, {"O"});
  ASSERT_EQ(simple.size(), 2u);
  EXPECT_EQ(simple[0].word, "Él");
  EXPECT_EQ(simple[0].start, 0u);
  EXPECT_EQ(simple[0].end, 2u);
  EXPECT_EQ(simple[1].word, "東 京");  // WordPiece's decoder joins CJK characters with spaces
  EXPECT_EQ(simple[1].start, 11u);     // code points, not bytes
  EXPECT_EQ(simple[1].end, 13u);
  const auto none =
      extract_entities(c.view(), kLabels, wordpiece_style(), Aggregation::kNone, {"O"});
  ASSERT_EQ(none.size(), 4u);
  EXPECT_EQ(none[2].word, "東");  // [UNK] reads as the text it covers
}

// "Thé café naïve résumé" through the RoBERTa-style byte-level BPE fixture
// (tests/data/fixtures/tokenizers/roberta-bpe-tiny, tokenizer_cases.json h0015: these ids, token
// strings and trimmed offsets). Tokens are bytes_to_unicode stand-ins: "Ġ" a space, "Ã©" the two
// bytes of é, "Ã" and "¯" one byte each of ï. The tokenizer has no continuing_subword_prefix,
// so words come from the space heuristic. Worked by hand from the pipeline and tokenizers'
// ByteLevel decoder (decode_chain: a token of stand-ins becomes its bytes, any other token its
// own UTF-8, then String::from_utf8_lossy).
Case byte_level_case() {
  Case c;
  c.text = "Th\xC3\xA9 caf\xC3\xA9 na\xC3\xAFve r\xC3\xA9sum\xC3\xA9";
  c.toks = {
      {"<s>", 0, 0, 0, kSpecial, true},
      {"T", 55, 0, 1, {0, 3, 0, 0, 0}},                  // B-PER
      {"h", 75, 1, 2, {0, 0, 3, 0, 0}},                  // I-PER
      {"\xC3\x83\xC2\xA9", 598, 2, 3, {0, 0, 3, 0, 0}},  // "Ã©" I-PER
      {"\xC4\xA0"
       "caf\xC3\x83\xC2\xA9",
       2949,
       4,
       8,
       {3, 0, 0, 0, 0}},  // "ĠcafÃ©" O
      {"\xC4\xA0"
       "na",
       2227,
       9,
       11,
       {0, 0, 0, 3, 0}},                           // "Ġna" B-LOC
      {"\xC3\x83", 131, 11, 12, {0, 0, 0, 0, 3}},  // "Ã" I-LOC
      {"\xC2\xAF", 111, 11, 12, {0, 0, 0, 0, 3}},  // "¯" I-LOC
      {"ve", 313, 12, 14, {0, 0, 0, 0, 3}},        // I-LOC
      {"\xC4\xA0"
       "r\xC3\x83\xC2\xA9",
       2834,
       15,
       17,
       {0, 3, 0, 0, 0}},  // "ĠrÃ©" B-PER
      {"s", 86, 17, 18, {3, 0, 0, 0, 0}},
      {"um", 367, 18, 20, {3, 0, 0, 0, 0}},
      {"\xC3\x83\xC2\xA9", 598, 20, 21, {3, 0, 0, 0, 0}},
      {"</s>", 2, 0, 0, kSpecial, true},
  };
  return c;
}

TokenTextStyle byte_level_style() {
  TokenTextStyle style;
  style.unk_token_id = 3;
  style.byte_level = true;
  return style;
}

TEST(TokenClassification, ByteLevelWordsAreTheDecodersNotTheTextSlice) {
  Case c = byte_level_case();
  // none: the raw token strings, stand-ins and all.
  const auto none =
      extract_entities(c.view(), kLabels, byte_level_style(), Aggregation::kNone, {"O"});
  ASSERT_EQ(none.size(), 8u);
  EXPECT_EQ(none[2].word, "\xC3\x83\xC2\xA9");  // "Ã©"
  EXPECT_EQ(none[3].word,
            "\xC4\xA0"
            "na");                      // "Ġna"
  EXPECT_EQ(none[5].word, "\xC2\xAF");  // "¯", half of ï
  // simple: each group's tokens read back together, the leading space of "Ġ" kept (the text
  // slice would have none), a character split over two tokens whole again.
  const auto simple =
      extract_entities(c.view(), kLabels, byte_level_style(), Aggregation::kSimple, {"O"});
  ASSERT_EQ(simple.size(), 3u);
  EXPECT_EQ(simple[0].label, "PER");
  EXPECT_EQ(simple[0].word, "Th\xC3\xA9");  // "Thé"
  EXPECT_EQ(simple[0].start, 0u);
  EXPECT_EQ(simple[0].end, 3u);
  EXPECT_EQ(simple[1].label, "LOC");
  EXPECT_EQ(simple[1].word, " na\xC3\xAFve");  // " naïve"
  EXPECT_EQ(simple[1].start, 9u);
  EXPECT_EQ(simple[1].end, 14u);
  EXPECT_EQ(simple[2].word, " r\xC3\xA9");  // " ré": the group ends where the labels do
  // first: words are read back once by aggregate_word and again by group_sub_entities. The
  // second pass meets a word without a space as stand-ins: "Thé"'s é is the stand-in of byte
  // 0xE9, a UTF-8 lead byte with nothing after it, so it becomes U+FFFD. " naïve" and
  // " résumé" hold a real space and pass through as UTF-8.
  const auto first =
      extract_entities(c.view(), kLabels, byte_level_style(), Aggregation::kFirst, {"O"});
  ASSERT_EQ(first.size(), 3u);
  EXPECT_EQ(first[0].word, "Th\xEF\xBF\xBD");
  EXPECT_EQ(first[0].end, 3u);
  EXPECT_EQ(first[1].word, " na\xC3\xAFve");
  EXPECT_EQ(first[2].label, "PER");
  EXPECT_EQ(first[2].word, " r\xC3\xA9sum\xC3\xA9");  // " résumé", one word
  EXPECT_EQ(first[2].start, 15u);
  EXPECT_EQ(first[2].end, 21u);
}

// tokenizers' ByteLevel decoder on its own: stand-ins to bytes, tokens with a non-stand-in
// character verbatim, and from_utf8_lossy's one U+FFFD per maximal ill-formed subpart.
TEST(TokenClassification, ByteLevelDecoderReadsBytesLossily) {
  const auto text = [](std::vector<std::string> tokens) {
    return tokens_to_text(tokens, byte_level_style());
  };
  EXPECT_EQ(text({"Hello",
                  "\xC4\xA0"
                  "there",
                  "\xC4\x8A"}),
            "Hello there\n");             // Ġ, Ċ
  EXPECT_EQ(text({"[PA D]"}), "[PA D]");  // a space is no stand-in: the token as it is
  // "ðŁĺ" is F0 9F 98 (a 4-byte sequence cut short): one U+FFFD; then "A".
  EXPECT_EQ(text({"\xC3\xB0\xC5\x81\xC4\xBA", "A"}),
            "\xEF\xBF\xBD"
            "A");
  // "À¯" is C0 AF: C0 is never a lead byte, AF never starts one: two U+FFFD.
  EXPECT_EQ(text({"\xC3\x80\xC2\xAF"}), "\xEF\xBF\xBD\xEF\xBF\xBD");
  // "íłĢ" is ED A0 80 (a surrogate): ED takes no A0, so three U+FFFD.
  EXPECT_EQ(text({"\xC3\xAD\xC5\x82\xC4\xA2"}), "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD");
}

TEST(TokenClassification, LabelsWithoutBIPrefixGroupAsContinuations) {
  Case c;
  c.text = "a b c";
  c.toks = {{"a", 1, 0, 1, {0, 3}}, {"b", 2, 2, 3, {0, 3}}, {"c", 3, 4, 5, {3, 0}}};
  const std::vector<std::string> labels{"O", "MISC-X"};
  const auto e = extract_entities(c.view(), labels, wordpiece_style(), Aggregation::kSimple, {});
  ASSERT_EQ(e.size(), 2u);
  EXPECT_EQ(e[0].label, "X");  // split("-", 1)[-1]
  EXPECT_EQ(e[0].word, "a b");
  EXPECT_EQ(e[1].label, "O");
}

TEST(TokenClassification, NamesAndBadInput) {
  EXPECT_EQ(aggregation_from_name("AVERAGE"), Aggregation::kAverage);
  EXPECT_EQ(aggregation_from_name("none"), Aggregation::kNone);
  EXPECT_FALSE(aggregation_from_name("longest").has_value());
  Case c = wordpiece_case();
  auto view = c.view();
  view.tokens = view.tokens.subspan(1);
  EXPECT_THROW(extract_entities(view, kLabels, wordpiece_style(), Aggregation::kNone, {}), Error);
}

// aggregate_overlapping_entities by hand. Two windows of "Ann Lee met Bo in Paris today"
// overlapping on "Bo in": window 1 found PER "Ann Lee" [0,7) and PER "Bo" [12,14); window 2 found
// PER "Bo in" [12,17) (longer: replaces "Bo"), LOC "Paris" [18,23) and, from the second window's
// view of the same span, LOC "Paris" again with a higher score (same length: replaces it).
// "in" [15,17) starts inside "Bo in" and is shorter: dropped. "today" [24,29) touches nothing.
TEST(TokenClassification, OverlappingWindowEntitiesMergeAsThePipelineDoes) {
  const auto entity = [](std::string label, float score, std::string word, std::size_t start,
                         std::size_t end) {
    Entity e;
    e.label = std::move(label);
    e.score = score;
    e.word = std::move(word);
    e.start = start;
    e.end = end;
    return e;
  };
  std::vector<Entity> windows = {
      entity("PER", 0.9f, "Ann Lee", 0, 7), entity("PER", 0.8f, "Bo", 12, 14),
      entity("PER", 0.6f, "Bo in", 12, 17), entity("LOC", 0.5f, "in", 15, 17),
      entity("LOC", 0.7f, "Paris", 18, 23), entity("LOC", 0.75f, "Paris", 18, 23),
      entity("LOC", 0.4f, "today", 24, 29),
  };
  // Out of order, as windows may give them: sorted by start first (stable).
  std::swap(windows[0], windows[6]);
  const auto merged = merge_overlapping_entities(windows);
  ASSERT_EQ(merged.size(), 4u);
  EXPECT_EQ(merged[0].word, "Ann Lee");
  EXPECT_EQ(merged[1].word, "Bo in");
  EXPECT_FLOAT_EQ(merged[1].score, 0.6f);
  EXPECT_EQ(merged[2].word, "Paris");
  EXPECT_FLOAT_EQ(merged[2].score, 0.75f);
  EXPECT_EQ(merged[3].word, "today");

  // Equal length and equal score: the first kept (strictly higher replaces).
  const auto tie = merge_overlapping_entities(
      {entity("PER", 0.5f, "Bo", 3, 5), entity("LOC", 0.5f, "Bo", 3, 5)});
  ASSERT_EQ(tie.size(), 1u);
  EXPECT_EQ(tie[0].label, "PER");
  // A shorter entity starting inside a longer one never replaces it, whatever its score.
  const auto inner = merge_overlapping_entities(
      {entity("PER", 0.1f, "Ann Lee", 0, 7), entity("PER", 0.99f, "Lee", 4, 7)});
  ASSERT_EQ(inner.size(), 1u);
  EXPECT_EQ(inner[0].word, "Ann Lee");
  EXPECT_TRUE(merge_overlapping_entities({}).empty());
}

}  // namespace
}  // namespace onepass::model::heads
