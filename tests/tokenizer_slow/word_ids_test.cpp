// Word ids of the slow tokenizers, which are those of the fast tokenizer transformers converts
// them to (what AutoTokenizer runs): BertPreTokenizer's words for WordPiece, Metaspace's for
// SentencePiece. Checked against a rule read off the token strings over every golden.json and
// tokenizer_cases.json case, against the folder's tokenizer.json wherever the two give the same
// ids, and on a few chosen texts. (golden_test.cpp checks tokenizer_cases.json's own word ids,
// recorded from the tokenizers library.)
#include <gtest/gtest.h>

#include <set>
#include <sstream>

#include "fixture_cases.h"
#include "tokenizer/common/unicode.h"
#include "tokenizer/sources.h"

namespace onepass::tokenizer::testing {
namespace {

namespace fs = std::filesystem;
using Ids = std::vector<std::int32_t>;

std::string show(const Ids& ids) {
  std::ostringstream out;
  for (std::size_t i = 0; i < ids.size(); ++i) out << (i ? " " : "") << ids[i];
  return out.str();
}

bool is_wordpiece(const std::string& model) { return slow_source(model).extension() == ".txt"; }

std::unique_ptr<Tokenizer> slow_tokenizer(const std::string& model) {
  return load_tokenizer(fixtures_dir() / "models" / model, slow_source(model));
}

// The fixture families' special tokens. One in the text is split out before the pre-tokenizer
// runs, so it is a word of its own; the token then spans its own spelling in the text (an
// "<unk>" that SentencePiece gives for unknown characters spans those characters).
bool split_out_added_token(const Encoding& e, std::size_t i, const std::u32string& text) {
  static const std::set<std::string> kSpecial = {
      "[CLS]", "[SEP]", "[PAD]",  "[MASK]",     "[UNK]",       "<s>",         "</s>",
      "<pad>", "<unk>", "<mask>", "<s>NOTUSED", "</s>NOTUSED", "<unk>NOTUSED"};
  if (!kSpecial.count(e.tokens[i])) return false;
  const auto [start, end] = e.offsets[i];
  return start <= end && end <= text.size() &&
         text.substr(start, end - start) == unicode::decode_utf8(e.tokens[i]);
}

// The rule: each text counts its words from 0; a word starts at a text's first token, at an
// added token and right after one, and otherwise at every WordPiece token without the "##"
// prefix, at every SentencePiece token with a leading "▁". The post-processor's tokens get -1.
// `texts` are the encoded text and pair; the first is skipped when it gave no tokens.
Ids words_by_rule(const Encoding& e, bool wordpiece, std::vector<std::u32string> texts) {
  Ids out;
  std::size_t which = 0;
  std::int32_t word = -1;
  bool seen_text = false;
  bool new_text = false;
  bool after_added = false;
  for (std::size_t i = 0; i < e.size(); ++i) {
    if (e.special_tokens_mask[i]) {
      out.push_back(-1);
      new_text = new_text || seen_text;
      continue;
    }
    const bool first_of_text = i == 0 || e.special_tokens_mask[i - 1] != 0;
    if (new_text) {
      word = -1;
      ++which;
    }
    new_text = false;
    const std::string& token = e.tokens[i];
    const bool added = which < texts.size() && split_out_added_token(e, i, texts[which]);
    const bool marked = wordpiece ? token.rfind("##", 0) != 0 : token.rfind("\xE2\x96\x81", 0) == 0;
    if (first_of_text || after_added || added || marked) ++word;
    out.push_back(word);
    seen_text = true;
    after_added = added;
  }
  return out;
}

Encoding encode(const Tokenizer& tok, const FixtureCase& c) {
  return tok.encode(c.text, c.pair ? std::optional<std::string_view>(*c.pair) : std::nullopt,
                    c.truncation);
}

Ids words_by_rule(const Tokenizer& tok, const Encoding& e, bool wordpiece, const std::string& text,
                  const std::optional<std::string>& pair) {
  std::vector<std::u32string> texts;
  if (tok.encode(text, std::nullopt, {}, false).size() > 0)
    texts.push_back(unicode::decode_utf8(text));
  if (pair) texts.push_back(unicode::decode_utf8(*pair));
  return words_by_rule(e, wordpiece, std::move(texts));
}

class SlowWordIds : public ::testing::TestWithParam<std::string> {};

TEST_P(SlowWordIds, FollowTheTokenStringsInEveryCase) {
  const std::string model = GetParam();
  const auto tok = slow_tokenizer(model);
  std::size_t checked = 0;
  for (const std::string file : {"golden.json", "tokenizer_cases.json"}) {
    if (!fs::exists(fixtures_dir() / "models" / model / file)) continue;
    for (const auto& c : read_cases(model, file)) {
      const Encoding e = encode(*tok, c);
      ASSERT_EQ(e.word_ids.size(), e.size()) << model << " " << file << " " << c.id;
      EXPECT_EQ(show(e.word_ids), show(words_by_rule(*tok, e, is_wordpiece(model), c.text, c.pair)))
          << model << " " << file << " case " << c.id;
      ++checked;
    }
  }
  EXPECT_GT(checked, 0u);
}

// Where the folder has the converted tokenizer.json, the slow word ids are its word ids for
// every golden.json case on which the two tokenizers give the same ids.
class SlowWordIdsBesideJson : public ::testing::TestWithParam<std::string> {};

TEST_P(SlowWordIdsBesideJson, AgreeWithTokenizerJson) {
  const std::string model = GetParam();
  const auto slow = slow_tokenizer(model);
  const auto fast = load_tokenizer_json(fixtures_dir() / "models" / model / "tokenizer.json");
  std::size_t compared = 0;
  const auto cases = read_cases(model, "golden.json");
  for (const auto& c : cases) {
    const Encoding s = encode(*slow, c);
    const Encoding f = encode(*fast, c);
    if (s.ids != f.ids) continue;
    EXPECT_EQ(show(s.word_ids), show(f.word_ids)) << model << " case " << c.id;
    ++compared;
  }
  std::printf("%s: word ids compared with tokenizer.json in %zu of %zu golden cases\n",
              model.c_str(), compared, cases.size());
  EXPECT_GE(compared + 1, cases.size());  // bert-tiny-*: one case's fast ids differ
}

std::string param_name(const ::testing::TestParamInfo<std::string>& info) {
  std::string name = info.param;
  for (char& ch : name) ch = std::isalnum(static_cast<unsigned char>(ch)) ? ch : '_';
  return name;
}

INSTANTIATE_TEST_SUITE_P(Models, SlowWordIds, ::testing::ValuesIn(model_names()), param_name);
INSTANTIATE_TEST_SUITE_P(Models, SlowWordIdsBesideJson,
                         ::testing::ValuesIn(model_names_with("tokenizer.json")), param_name);

// Chosen texts through the three folders that have both sources: punctuation, CJK ideographs,
// words of several pieces, an added token in the text, a pair. The ids must agree (else the
// text does not test what it means to); the word ids then must too, and follow the rule.
TEST(SlowWordIds, ChosenTextsAgreeWithTokenizerJson) {
  const std::vector<std::pair<std::string, std::optional<std::string>>> texts = {
      {"Hello, world! It's 3.14 (roughly)...", std::nullopt},
      {"東京は日本の首都です and 서울", std::nullopt},
      {"unaffable tokenization of a neighbourhood", std::nullopt},
      {"the capital is [MASK] or <mask>, they said", std::nullopt},
      {"Where is the station?", std::string("It is near the river, north of here.")},
      {"", std::string("only the second text")},
  };
  for (const std::string model : {"bert-tiny-nli", "xlmr-tiny-nli", "deberta-v2-tiny-nli"}) {
    const auto slow = slow_tokenizer(model);
    const auto fast = load_tokenizer_json(fixtures_dir() / "models" / model / "tokenizer.json");
    for (const auto& [text, pair] : texts) {
      SCOPED_TRACE(model + ": '" + text + "'" + (pair ? " + '" + *pair + "'" : ""));
      const auto second = pair ? std::optional<std::string_view>(*pair) : std::nullopt;
      const Encoding s = slow->encode(text, second);
      const Encoding f = fast->encode(text, second);
      ASSERT_EQ(show(s.ids), show(f.ids));
      EXPECT_EQ(show(s.word_ids), show(f.word_ids));
      EXPECT_EQ(show(s.word_ids), show(words_by_rule(*slow, s, is_wordpiece(model), text, pair)));
    }
  }
}

// An added token is a word of its own even where no space parts it from its neighbours.
TEST(SlowWordIds, AddedTokenIsAWordOfItsOwn) {
  for (const auto& [model, text, token] : {std::tuple<std::string, std::string, std::string>{
                                               "bert-tiny-nli", "abc[MASK]def", "[MASK]"},
                                           {"xlmr-tiny-nli", "abc<mask>def", "<mask>"},
                                           {"camembert-tiny-nli", "abc<mask>def", "<mask>"},
                                           {"mpnet-tiny-nli", "abc<mask>def", "<mask>"}}) {
    SCOPED_TRACE(model);
    const Encoding e = slow_tokenizer(model)->encode(text, std::nullopt);
    std::size_t at = 0;
    while (at < e.size() && e.tokens[at] != token) ++at;
    ASSERT_LT(at, e.size());
    ASSERT_GT(at, 1u);  // "abc" comes first, after the leading special token
    ASSERT_LT(at + 2, e.size());
    EXPECT_EQ(e.word_ids[at], e.word_ids[at - 1] + 1);
    EXPECT_EQ(e.word_ids[at + 1], e.word_ids[at] + 1);
  }
}

// Truncation cuts the word ids with the tokens and leaves the kept ones as they were.
TEST(SlowWordIds, TruncationKeepsTheWordsOfTheKeptTokens) {
  const std::string a = "one two three unaffable four five six seven";
  const std::string b = "alpha beta gamma tokenization";
  for (const std::string model : {"bert-tiny-nli", "xlmr-tiny-nli"}) {
    SCOPED_TRACE(model);
    const auto tok = slow_tokenizer(model);
    const Ids first = tok->encode(a, std::nullopt, {}, false).word_ids;
    const Ids second = tok->encode(b, std::nullopt, {}, false).word_ids;
    const Encoding full = tok->encode(a, b);
    const std::size_t specials = full.size() - first.size() - second.size();
    for (const auto direction : {TruncationDirection::kRight, TruncationDirection::kLeft}) {
      const TruncationOptions options{full.size() - 3, TruncationStrategy::kOnlyFirst, direction};
      const Encoding cut = tok->encode(a, b, options);
      ASSERT_EQ(cut.word_ids.size(), cut.size());
      Ids kept;  // the first text's word ids in `cut`, in order
      for (std::size_t i = 0; i < cut.size() && kept.size() < first.size() - 3; ++i)
        if (cut.word_ids[i] >= 0) kept.push_back(cut.word_ids[i]);
      const auto from =
          direction == TruncationDirection::kRight ? first.begin() : first.begin() + 3;
      EXPECT_EQ(show(kept), show(Ids(from, from + static_cast<long>(first.size() - 3))));
      // The second text is untouched and still counts from 0.
      EXPECT_EQ(show(Ids(cut.word_ids.end() - static_cast<long>(second.size()) - 1,
                         cut.word_ids.end() - 1)),
                show(second));
    }
    EXPECT_EQ(std::count(full.word_ids.begin(), full.word_ids.end(), -1),
              static_cast<long>(specials));
  }
}

// Without special tokens no token is a special one.
TEST(SlowWordIds, NoSpecialTokensNoMinusOne) {
  for (const auto& model : model_names()) {
    const Encoding e = slow_tokenizer(model)->encode("a pair of texts,", "here", {}, false);
    ASSERT_EQ(e.word_ids.size(), e.size()) << model;
    for (const std::int32_t w : e.word_ids) EXPECT_GE(w, 0) << model;
  }
}

}  // namespace
}  // namespace onepass::tokenizer::testing
