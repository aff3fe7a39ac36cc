// tokenizer.json components that the fixture folders do not exercise, checked against values
// worked out by hand from the `tokenizers` crate's documented behaviour (its own unit-test
// vectors where it has them).
#include <gtest/gtest.h>

#include "base/error.h"
#include "tokenizer/common/unicode.h"
#include "tokenizer/hf_json/model.h"
#include "tokenizer/hf_json/normalizers.h"
#include "tokenizer/hf_json/pre_tokenizers.h"
#include "tokenizer/hf_json/tokenizer_json.h"

namespace onepass::tokenizer::hf_json {
namespace {

using Piece = std::pair<std::string, Offsets>;

std::vector<Piece> pre_tokenize(const std::string& json, const std::string& text) {
  const auto pt = make_pre_tokenizer(Json::parse(json));
  std::vector<Split> splits;
  splits.push_back(Split{NormalizedString(unicode::decode_utf8(text), 0), std::nullopt});
  pt->pre_tokenize(splits);
  std::vector<Piece> out;
  for (const auto& s : splits)
    out.emplace_back(unicode::encode_utf8(s.normalized.get()),
                     s.normalized.to_original(0, s.normalized.size()));
  return out;
}

std::string normalize(const std::string& json, const std::string& text) {
  const auto n = make_normalizer(Json::parse(json));
  NormalizedString s(unicode::decode_utf8(text), 0);
  n->normalize(s);
  return unicode::encode_utf8(s.get());
}

std::vector<std::pair<std::int32_t, Offsets>> model_tokens(const std::string& json,
                                                           const std::string& text) {
  const auto m = make_model(Json::parse(json));
  std::vector<Token> tokens;
  m->tokenize(unicode::decode_utf8(text), tokens);
  std::vector<std::pair<std::int32_t, Offsets>> out;
  for (const auto& t : tokens) out.push_back({t.id, {t.start, t.end}});
  return out;
}

constexpr const char* kWordRegex = R"(\\w+|[^\\w\\s]+)";

std::string split_json(const std::string& behavior) {
  return std::string(R"({"type":"Split","pattern":{"Regex":")") + kWordRegex +
         R"("},"behavior":")" + behavior + R"(","invert":true})";
}

TEST(PreTokenizers, SplitBehaviors) {
  const std::string text = "How are you doing?";
  EXPECT_EQ(pre_tokenize(split_json("Removed"), text), (std::vector<Piece>{{"How", {0, 3}},
                                                                           {"are", {4, 7}},
                                                                           {"you", {8, 11}},
                                                                           {"doing", {12, 17}},
                                                                           {"?", {17, 18}}}));
  EXPECT_EQ(pre_tokenize(split_json("Isolated"), text).size(), 8u);
  EXPECT_EQ(pre_tokenize(split_json("MergedWithPrevious"), text),
            (std::vector<Piece>{{"How ", {0, 4}},
                                {"are ", {4, 8}},
                                {"you ", {8, 12}},
                                {"doing", {12, 17}},
                                {"?", {17, 18}}}));
  EXPECT_EQ(pre_tokenize(split_json("MergedWithNext"), text),
            (std::vector<Piece>{{"How", {0, 3}},
                                {" are", {3, 7}},
                                {" you", {7, 11}},
                                {" doing", {11, 17}},
                                {"?", {17, 18}}}));
  EXPECT_EQ(pre_tokenize(split_json("Contiguous"), text),
            (std::vector<Piece>{{"How", {0, 3}},
                                {" ", {3, 4}},
                                {"are", {4, 7}},
                                {" ", {7, 8}},
                                {"you", {8, 11}},
                                {" ", {11, 12}},
                                {"doing?", {12, 18}}}));
  // A literal pattern, and its inverse on the words.
  EXPECT_EQ(pre_tokenize(
                R"({"type":"Split","pattern":{"String":" "},"behavior":"Removed","invert":false})",
                "Hey, man!"),
            (std::vector<Piece>{{"Hey,", {0, 4}}, {"man!", {5, 9}}}));
  EXPECT_EQ(
      pre_tokenize(
          R"({"type":"Split","pattern":{"String":"Hello"},"behavior":"Removed","invert":true})",
          "Hello Hello"),
      (std::vector<Piece>{{"Hello", {0, 5}}, {"Hello", {6, 11}}}));
}

TEST(PreTokenizers, DigitsPunctuationWhitespace) {
  EXPECT_EQ(pre_tokenize(R"({"type":"Digits","individual_digits":false})", "Hey 123 friend!"),
            (std::vector<Piece>{{"Hey ", {0, 4}}, {"123", {4, 7}}, {" friend!", {7, 15}}}));
  EXPECT_EQ(
      pre_tokenize(R"({"type":"Digits","individual_digits":true})", "Hey 123 friend!"),
      (std::vector<Piece>{
          {"Hey ", {0, 4}}, {"1", {4, 5}}, {"2", {5, 6}}, {"3", {6, 7}}, {" friend!", {7, 15}}}));
  EXPECT_EQ(pre_tokenize(R"({"type":"Punctuation","behavior":"Isolated"})",
                         "Hey friend!     How are you?!?"),
            (std::vector<Piece>{{"Hey friend", {0, 10}},
                                {"!", {10, 11}},
                                {"     How are you", {11, 27}},
                                {"?", {27, 28}},
                                {"!", {28, 29}},
                                {"?", {29, 30}}}));
  EXPECT_EQ(pre_tokenize(R"({"type":"Whitespace"})", "Hey man!"),
            (std::vector<Piece>{{"Hey", {0, 3}}, {"man", {4, 7}}, {"!", {7, 8}}}));
  EXPECT_EQ(pre_tokenize(R"({"type":"WhitespaceSplit"})", "Hey, man, Good?"),
            (std::vector<Piece>{{"Hey,", {0, 4}}, {"man,", {5, 9}}, {"Good?", {10, 15}}}));
  // Unicode White_Space (U+2028) splits; U+200B (not White_Space) does not.
  EXPECT_EQ(pre_tokenize(R"({"type":"WhitespaceSplit"})", "a\u2028b\u200Bc"),
            (std::vector<Piece>{{"a", {0, 1}}, {"b\u200Bc", {2, 5}}}));
}

TEST(PreTokenizers, MetaspaceSchemes) {
  const std::string always =
      R"({"type":"Metaspace","replacement":"▁","prepend_scheme":"always","split":true})";
  EXPECT_EQ(pre_tokenize(always, "Hey friend!"),
            (std::vector<Piece>{{"▁Hey", {0, 3}}, {"▁friend!", {3, 11}}}));
  EXPECT_EQ(
      pre_tokenize(always, "Hey   friend!"),
      (std::vector<Piece>{{"▁Hey", {0, 3}}, {"▁", {3, 4}}, {"▁", {4, 5}}, {"▁friend!", {5, 13}}}));
  EXPECT_EQ(pre_tokenize(
                R"({"type":"Metaspace","replacement":"▁","prepend_scheme":"never","split":false})",
                "Hey friend"),
            (std::vector<Piece>{{"Hey▁friend", {0, 10}}}));
}

TEST(PreTokenizers, ByteLevelWithPrefixSpace) {
  EXPECT_EQ(
      pre_tokenize(
          R"({"type":"ByteLevel","add_prefix_space":true,"trim_offsets":true,"use_regex":true})",
          "Hello my friend, how's it?"),
      (std::vector<Piece>{{"ĠHello", {0, 5}},
                          {"Ġmy", {5, 8}},
                          {"Ġfriend", {8, 15}},
                          {",", {15, 16}},
                          {"Ġhow", {16, 20}},
                          {"'s", {20, 22}},
                          {"Ġit", {22, 25}},
                          {"?", {25, 26}}}));
  // é is two bytes: two stand-ins, both aligned to the one code point.
  EXPECT_EQ(
      pre_tokenize(R"({"type":"ByteLevel","add_prefix_space":false,"use_regex":false})", "\u00E9"),
      (std::vector<Piece>{{"Ã©", {0, 1}}}));
}

TEST(Normalizers, UnicodeCaseAccentsAndEdits) {
  EXPECT_EQ(normalize(R"({"type":"NFKC"})", "\uFB01\uFF21"), "fiA");
  EXPECT_EQ(normalize(R"({"type":"NFD"})", "\u00E9"), "e\u0301");
  // StripAccents alone removes combining marks only: a precomposed letter stays.
  EXPECT_EQ(
      normalize(
          R"({"type":"Sequence","normalizers":[{"type":"Lowercase"},{"type":"StripAccents"}]})",
          "\u00C0e\u0301\u0130"),
      "\u00E0ei");
  EXPECT_EQ(
      normalize(R"({"type":"Sequence","normalizers":[{"type":"NFD"},{"type":"StripAccents"}]})",
                "\u00C0"),
      "A");
  EXPECT_EQ(
      normalize(
          R"({"type":"BertNormalizer","clean_text":true,"handle_chinese_chars":true,"strip_accents":null,"lowercase":true})",
          "H\u00E9llo\u4E2D\x01\u2028x"),
      "hello \u4E2D  x");
  EXPECT_EQ(normalize(R"({"type":"Replace","pattern":{"String":"ab"},"content":"X"})", "aabab"),
            "aXX");
  EXPECT_EQ(normalize(R"({"type":"Replace","pattern":{"Regex":"a+"},"content":"-"})", "baaac"),
            "b-c");
  EXPECT_EQ(normalize(R"({"type":"Prepend","prepend":"▁"})", "hi"), "▁hi");
  EXPECT_EQ(normalize(R"({"type":"Prepend","prepend":"▁"})", ""), "");
  EXPECT_EQ(normalize(R"({"type":"Strip","strip_left":true,"strip_right":false})", " \u3000a "),
            "a ");
}

// A Replace whose pattern matches the empty string inserts its content between every two code
// points; chained, a 20-byte text would grow to gigabytes. It is refused instead, while a
// Replace that grows a text by a small factor still runs.
TEST(Normalizers, AReplaceThatExplodesTheTextIsRefused) {
  const std::string content(60, 's');
  const std::string explode =
      R"({"type":"Replace","pattern":{"Regex":"a*"},"content":")" + content + R"("})";
  const std::string chain =
      R"({"type":"Sequence","normalizers":[)" + explode + "," + explode + "," + explode + "]}";
  EXPECT_THROW(normalize(chain, "abcdefghij0123456789"), onepass::Error);
  // A Replace that grows a text fourfold runs as the crate runs it.
  EXPECT_EQ(normalize(R"({"type":"Replace","pattern":{"String":"a"},"content":"aaaa"})", "aba"),
            "aaaabaaaa");
}

TEST(Models, BpeMergesInRankOrder) {
  const std::string bpe = R"({"type":"BPE","unk_token":"<unk>","fuse_unk":false,
    "vocab":{"u":0,"n":1,"r":2,"e":3,"l":4,"a":5,"t":6,"d":7,"un":8,"re":9,"at":10,"ed":11,"ated":12,"rel":13,"unrel":14,"<unk>":15},
    "merges":["u n","r e",["a","t"],"e d","at ed","re l","un rel"]})";
  EXPECT_EQ(model_tokens(bpe, "unrelated"),
            (std::vector<std::pair<std::int32_t, Offsets>>{{14, {0, 5}}, {12, {5, 9}}}));
  EXPECT_EQ(model_tokens(bpe, "unx"),
            (std::vector<std::pair<std::int32_t, Offsets>>{{8, {0, 2}}, {15, {2, 3}}}));
  EXPECT_EQ(model_tokens(bpe, "xxa"), (std::vector<std::pair<std::int32_t, Offsets>>{
                                          {15, {0, 1}}, {15, {1, 2}}, {5, {2, 3}}}));
  std::string fused = bpe;
  fused.replace(fused.find("\"fuse_unk\":false"), 16, "\"fuse_unk\":true");
  EXPECT_EQ(model_tokens(fused, "xxa"),
            (std::vector<std::pair<std::int32_t, Offsets>>{{15, {0, 2}}, {5, {2, 3}}}));
}

TEST(Models, BpePrefixSuffixAndByteFallback) {
  const std::string prefixed = R"({"type":"BPE","continuing_subword_prefix":"##",
    "vocab":{"a":0,"##b":1,"##c":2,"##bc":3,"abc":4},"merges":["##b ##c","a ##bc"]})";
  EXPECT_EQ(model_tokens(prefixed, "abc"),
            (std::vector<std::pair<std::int32_t, Offsets>>{{4, {0, 3}}}));
  const std::string suffixed = R"({"type":"BPE","end_of_word_suffix":"</w>",
    "vocab":{"a":0,"b</w>":1,"ab</w>":2,"b":3},"merges":["a b</w>"]})";
  EXPECT_EQ(model_tokens(suffixed, "ab"),
            (std::vector<std::pair<std::int32_t, Offsets>>{{2, {0, 2}}}));
  EXPECT_EQ(
      model_tokens(suffixed, "ba"),
      (std::vector<std::pair<std::int32_t, Offsets>>{{3, {0, 1}}}));  // no "a</w>": dropped, no unk
  const std::string fallback = R"({"type":"BPE","unk_token":"<unk>","byte_fallback":true,
    "vocab":{"<unk>":0,"a":1,"<0xC3>":2,"<0xA9>":3},"merges":[]})";
  EXPECT_EQ(model_tokens(fallback, "a\u00E9"),
            (std::vector<std::pair<std::int32_t, Offsets>>{{1, {0, 1}}, {2, {1, 2}}, {3, {1, 2}}}));
  EXPECT_EQ(model_tokens(fallback, "\u4E2D"),
            (std::vector<std::pair<std::int32_t, Offsets>>{{0, {0, 1}}}));
  const std::string ignore =
      R"({"type":"BPE","ignore_merges":true,"vocab":{"a":0,"b":1,"ab":2,"abab":3},"merges":[]})";
  EXPECT_EQ(model_tokens(ignore, "abab"),
            (std::vector<std::pair<std::int32_t, Offsets>>{{3, {0, 4}}}));
}

TEST(Models, UnigramViterbiUnkFusionAndByteFallback) {
  const std::string uni =
      R"({"type":"Unigram","unk_id":0,"vocab":[["<unk>",0],["a",-1],["b",-2],["ab",-2.5],["c",-3]]})";
  EXPECT_EQ(model_tokens(uni, "ab"), (std::vector<std::pair<std::int32_t, Offsets>>{{3, {0, 2}}}));
  EXPECT_EQ(model_tokens(uni, "abc"),
            (std::vector<std::pair<std::int32_t, Offsets>>{{3, {0, 2}}, {4, {2, 3}}}));
  EXPECT_EQ(model_tokens(uni, "xy\u00E9a"),
            (std::vector<std::pair<std::int32_t, Offsets>>{{0, {0, 3}}, {1, {3, 4}}}));
  const std::string fallback =
      R"({"type":"Unigram","unk_id":0,"byte_fallback":true,"vocab":[["<unk>",0],["a",-1],["<0x78>",-5]]})";
  EXPECT_EQ(model_tokens(fallback, "xa"),
            (std::vector<std::pair<std::int32_t, Offsets>>{{2, {0, 1}}, {1, {1, 2}}}));
  EXPECT_EQ(model_tokens(fallback, "za"),
            (std::vector<std::pair<std::int32_t, Offsets>>{{0, {0, 1}}, {1, {1, 2}}}));
  const std::string no_unk = R"({"type":"Unigram","vocab":[["a",-1]]})";
  EXPECT_THROW(model_tokens(no_unk, "b"), Error);
}

// A whole tokenizer from JSON: WordPiece over Whitespace, BertProcessing, and added tokens.
std::string wordpiece_doc(const std::string& added) {
  return R"({"normalizer":null,"pre_tokenizer":{"type":"WhitespaceSplit"},
    "post_processor":{"type":"BertProcessing","sep":["[SEP]",1],"cls":["[CLS]",0]},
    "model":{"type":"WordPiece","unk_token":"[UNK]","continuing_subword_prefix":"##","max_input_chars_per_word":5,
      "vocab":{"[CLS]":0,"[SEP]":1,"[UNK]":2,"ab":3,"##c":4,"c":5,"d":6,"<x>":7}},
    "added_tokens":[)" +
         added + "]}";
}

TEST(Pipeline, BertProcessingAndTruncation) {
  const auto tok = parse_tokenizer_json(wordpiece_doc(""));
  const Encoding e = tok->encode("abc c", std::string_view("d abcccccc"));
  EXPECT_EQ(e.ids, (std::vector<std::int32_t>{0, 3, 4, 5, 1, 6, 2, 1}));
  EXPECT_EQ(e.type_ids, (std::vector<std::int32_t>{0, 0, 0, 0, 0, 1, 1, 1}));
  EXPECT_EQ(e.special_tokens_mask, (std::vector<std::uint8_t>{1, 0, 0, 0, 1, 0, 0, 1}));
  EXPECT_EQ(e.offsets[2], (std::pair<std::uint32_t, std::uint32_t>{2, 3}));
  EXPECT_EQ(e.offsets[6],
            (std::pair<std::uint32_t, std::uint32_t>{2, 10}));  // over-long word -> [UNK]
  // Left truncation keeps the end of the text.
  TruncationOptions left{5, TruncationStrategy::kLongestFirst, TruncationDirection::kLeft};
  EXPECT_EQ(tok->encode("abc c d c", std::nullopt, left).ids,
            (std::vector<std::int32_t>{0, 5, 6, 5, 1}));
  TruncationOptions right{5, TruncationStrategy::kLongestFirst, TruncationDirection::kRight};
  EXPECT_EQ(tok->encode("abc c d c", std::nullopt, right).ids,
            (std::vector<std::int32_t>{0, 3, 4, 5, 1}));
  // longest_first on a pair: 7 - 3 special = 4 ids, the longer text gives way first.
  TruncationOptions pair7{7};
  EXPECT_EQ(tok->encode("c", std::string_view("d d d d d"), pair7).ids,
            (std::vector<std::int32_t>{0, 5, 1, 6, 6, 6, 1}));
  EXPECT_THROW(tok->encode("c c c", std::string_view("d"), {5, TruncationStrategy::kOnlySecond}),
               Error);
  EXPECT_THROW(tok->encode("c", std::nullopt, {1}), Error);  // less than the special tokens
  EXPECT_EQ(tok->encode("c d", std::nullopt, {}, false).ids, (std::vector<std::int32_t>{5, 6}));
}

TEST(Pipeline, AddedTokenRules) {
  const auto single = parse_tokenizer_json(wordpiece_doc(
      R"({"id":7,"content":"<x>","single_word":true,"lstrip":false,"rstrip":false,"normalized":false,"special":true})"));
  // Glued to a word character, a single_word token is not matched (and <x> is then a plain
  // word, which WordPiece also has in its vocab: the id is the same, so check the split).
  EXPECT_EQ(single->encode("c <x> c<x>", std::nullopt, {}, false).ids,
            (std::vector<std::int32_t>{5, 7, 2}));
  const auto stripping = parse_tokenizer_json(wordpiece_doc(
      R"({"id":7,"content":"<x>","single_word":false,"lstrip":true,"rstrip":true,"normalized":false,"special":true})"));
  const Encoding e = stripping->encode("c \u0085 <x>  d", std::nullopt, {}, false);
  EXPECT_EQ(e.ids, (std::vector<std::int32_t>{5, 7, 6}));
  EXPECT_EQ(e.offsets[1],
            (std::pair<std::uint32_t, std::uint32_t>{1, 9}));  // both strips join the match
}

TEST(Pipeline, UnsupportedComponentsAreNamed) {
  try {
    parse_tokenizer_json(R"({"model":{"type":"WordLevel","vocab":{}}})");
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kUnsupported);
    EXPECT_NE(std::string(e.what()).find("WordLevel"), std::string::npos);
  }
  try {
    parse_tokenizer_json(
        R"({"pre_tokenizer":{"type":"UnicodeScripts"},"model":{"type":"BPE","vocab":{},"merges":[]}})");
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kUnsupported);
    EXPECT_NE(std::string(e.what()).find("UnicodeScripts"), std::string::npos);
  }
  EXPECT_THROW(parse_tokenizer_json("{not json"), Error);
  EXPECT_THROW(parse_tokenizer_json(R"({"model":{"type":"BPE","vocab":{"a":0},"merges":["a b"]}})"),
               Error);
  // The id table is sized by the largest id: a stray huge one is refused, not allocated.
  try {
    parse_tokenizer_json(R"({"model":{"type":"BPE","vocab":{"a":0,"b":1073741000},"merges":[]}})");
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kInvalidModel);
    EXPECT_NE(std::string(e.what()).find("4194303"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace onepass::tokenizer::hf_json
