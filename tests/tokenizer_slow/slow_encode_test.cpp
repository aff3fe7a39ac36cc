// Behaviour of the slow tokenizers that the fixtures do not exercise: truncate_sequences for
// each strategy and side (against slices of the untruncated ids), options of BertTokenizer and
// DebertaV2Tokenizer on small hand-made folders, and the special-token rules.
#include <gtest/gtest.h>

#include <fstream>

#include "base/error.h"
#include "fixture_cases.h"
#include "tokenizer/sources.h"

namespace onepass::tokenizer::testing {
namespace {

namespace fs = std::filesystem;
using Ids = std::vector<std::int32_t>;
using Strings = std::vector<std::string>;

std::unique_ptr<Tokenizer> fixture(const std::string& model) {
  return load_tokenizer(fixtures_dir() / "models" / model, slow_source(model));
}

Ids slice(const Ids& ids, std::size_t from, std::size_t to) {
  return Ids(ids.begin() + static_cast<long>(from), ids.begin() + static_cast<long>(to));
}

// A temporary folder with the given files, removed at the end of the test.
class TempFolder {
 public:
  TempFolder()
      : path_(fs::temp_directory_path() /
              ("onepass_slow_" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) +
               "_" + ::testing::UnitTest::GetInstance()->current_test_info()->name())) {
    fs::create_directories(path_);
  }
  ~TempFolder() { fs::remove_all(path_); }
  void write(const std::string& name, const std::string& content) const {
    std::ofstream(path_ / name, std::ios::binary) << content;
  }
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

TEST(SlowTruncation, EachStrategyCutsLikeTruncateSequences) {
  const auto tok = fixture("bert-tiny-nli");
  const std::string a = "one two three four five six seven eight nine ten eleven twelve";
  const std::string b = "alpha beta gamma delta";
  const Encoding full = tok->encode(a, b);
  const Ids first = tok->encode(a, std::nullopt, {}, false).ids;
  const Ids second = tok->encode(b, std::nullopt, {}, false).ids;
  ASSERT_EQ(full.size(), first.size() + second.size() + 3);
  ASSERT_GT(first.size(), second.size() + 2);
  ASSERT_GT(second.size(), 2u);
  const std::int32_t cls = *tok->token_to_id("[CLS]");
  const std::int32_t sep = *tok->token_to_id("[SEP]");
  auto layout = [&](const Ids& x, const Ids& y) {
    Ids ids{cls};
    ids.insert(ids.end(), x.begin(), x.end());
    ids.push_back(sep);
    ids.insert(ids.end(), y.begin(), y.end());
    ids.push_back(sep);
    return ids;
  };

  // longest_first: one token at a time from the longer text, from the second on a tie.
  const std::size_t gap = first.size() - second.size();
  TruncationOptions options{full.size() - gap - 3, TruncationStrategy::kLongestFirst};
  Encoding got = tok->encode(a, b, options);
  // gap tokens from the first, then alternately second, first, second.
  EXPECT_EQ(got.ids,
            layout(slice(first, 0, first.size() - gap - 1), slice(second, 0, second.size() - 2)));
  EXPECT_EQ(got.size(), options.max_length);

  options = {full.size() - 2, TruncationStrategy::kOnlyFirst};
  EXPECT_EQ(tok->encode(a, b, options).ids, layout(slice(first, 0, first.size() - 2), second));
  options = {full.size() - 2, TruncationStrategy::kOnlySecond};
  EXPECT_EQ(tok->encode(a, b, options).ids, layout(first, slice(second, 0, second.size() - 2)));
  options = {full.size() - 2, TruncationStrategy::kOnlySecond, TruncationDirection::kLeft};
  EXPECT_EQ(tok->encode(a, b, options).ids, layout(first, slice(second, 2, second.size())));
  got = tok->encode(a, b, options);
  EXPECT_EQ(got.type_ids.back(), 1);
  EXPECT_EQ(std::count(got.type_ids.begin(), got.type_ids.end(), 1),
            static_cast<long>(second.size() - 2 + 1));

  // A single text under longest_first loses from its end; max_length counts [CLS] and [SEP].
  options = {5, TruncationStrategy::kLongestFirst};
  got = tok->encode(a, std::nullopt, options);
  Ids single{cls};
  single.insert(single.end(), first.begin(), first.begin() + 3);
  single.push_back(sep);
  EXPECT_EQ(got.ids, single);
  // Long enough already: untouched.
  options = {full.size(), TruncationStrategy::kOnlySecond};
  EXPECT_EQ(tok->encode(a, b, options).ids, full.ids);
}

TEST(SlowTruncation, ImpossibleRequestsAreInvalidInput) {
  const auto tok = fixture("xlmr-tiny-nli");
  auto expect_invalid = [&](std::optional<std::string_view> pair, TruncationOptions options) {
    try {
      tok->encode("several words in the first text", pair, options);
      ADD_FAILURE() << "expected an error";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::kInvalidInput);
    }
  };
  expect_invalid("x", {6, TruncationStrategy::kOnlySecond});           // second text too short
  expect_invalid(std::nullopt, {6, TruncationStrategy::kOnlySecond});  // no second text
  expect_invalid("x", {4, TruncationStrategy::kOnlyFirst});            // four specials alone
  expect_invalid(std::nullopt, {2, TruncationStrategy::kLongestFirst});
  EXPECT_EQ(tok->num_special_tokens(true), 4u);
  EXPECT_EQ(tok->num_special_tokens(false), 2u);
  const std::size_t x = tok->encode("x", std::nullopt, {}, false).size();
  const TruncationOptions fits{4 + x + 1, TruncationStrategy::kOnlyFirst};
  EXPECT_EQ(tok->encode("several words", "x", fits).size(), 4 + x + 1);
}

TEST(SlowSentencePiece, XlmRobertaIdsAreFairseqShifted) {
  const auto tok = fixture("xlmr-tiny-nli");
  EXPECT_EQ(tok->vocab_size(), 3502u);
  EXPECT_EQ(tok->token_to_id("<s>"), 0);
  EXPECT_EQ(tok->token_to_id("<pad>"), 1);
  EXPECT_EQ(tok->token_to_id("</s>"), 2);
  EXPECT_EQ(tok->token_to_id("<unk>"), 3);
  EXPECT_EQ(tok->token_to_id("<mask>"), 3501);
  EXPECT_EQ(tok->token_to_id("no-such-piece-here"), std::nullopt);
  // <mask> has lstrip: the space before it joins the match.
  const Encoding e = tok->encode("a <mask>", "b");
  EXPECT_EQ(e.tokens.at(0), "<s>");
  const auto mask =
      static_cast<std::size_t>(std::find(e.ids.begin(), e.ids.end(), 3501) - e.ids.begin());
  ASSERT_LT(mask, e.size());
  EXPECT_EQ(e.tokens.at(mask), "<mask>");
  EXPECT_EQ(e.offsets.at(mask), (std::pair<std::uint32_t, std::uint32_t>{2, 8}));
  EXPECT_EQ((Strings(e.tokens.begin() + static_cast<long>(mask) + 1,
                     e.tokens.begin() + static_cast<long>(mask) + 3)),
            (Strings{"</s>", "</s>"}));
  // "a" before the mask lost its trailing space, so no lone "▁" piece precedes <mask>.
  EXPECT_NE(e.tokens.at(mask - 1), "▁");
  EXPECT_EQ(e.type_ids, Ids(e.size(), 0));
}

// The expected ids are what transformers v4.40.2's CamembertTokenizer gives for the same folder
// (the one its golden.json came from) and the same texts.
TEST(SlowSentencePiece, CamembertIdsAreShiftedByFour) {
  const auto tok = fixture("camembert-tiny-nli");
  EXPECT_EQ(tok->vocab_size(), 3505u);  // len(tokenizer): 3500 pieces + 4, then <mask>
  EXPECT_EQ(tok->token_to_id("<s>NOTUSED"), 0);
  EXPECT_EQ(tok->token_to_id("<pad>"), 1);
  EXPECT_EQ(tok->token_to_id("</s>NOTUSED"), 2);
  EXPECT_EQ(tok->token_to_id("<unk>"), 3);
  EXPECT_EQ(tok->token_to_id("<unk>NOTUSED"), 4);
  EXPECT_EQ(tok->token_to_id("<s>"), 5);  // the model's piece 1 + 4
  EXPECT_EQ(tok->token_to_id("</s>"), 6);
  EXPECT_EQ(tok->token_to_id("<mask>"), 3504);
  EXPECT_EQ(tok->token_to_id("no-such-piece-here"), std::nullopt);

  // <mask> has lstrip; the pair is <s> A </s></s> B </s>, all type 0.
  Encoding e = tok->encode("a <mask>", "b");
  EXPECT_EQ(e.ids, (Ids{5, 29, 3504, 6, 6, 663, 6}));
  EXPECT_EQ(e.type_ids, Ids(7, 0));
  // The NOTUSED tokens are special tokens of their own, matched in the text.
  e = tok->encode("x <s>NOTUSED y<unk>NOTUSED </s>NOTUSED <pad> z", std::nullopt);
  EXPECT_EQ(e.ids, (Ids{5, 11, 98, 0, 11, 63, 4, 2, 1, 883, 6}));
  EXPECT_EQ(e.tokens, (Strings{"<s>", "▁", "x", "<s>NOTUSED", "▁", "y", "<unk>NOTUSED",
                               "</s>NOTUSED", "<pad>", "▁z", "</s>"}));
  // SentencePiece's unk (piece 0) is <unk> 3, not 0 + 4.
  EXPECT_EQ(tok->encode("Élève ქართული", std::nullopt).ids, (Ids{5, 11, 3, 1556, 11, 3, 6}));

  // Without tokenizer_config.json the class is told by its <s>NOTUSED token, and the ids are
  // the class's own.
  const fs::path source = fixtures_dir() / "models" / "camembert-tiny-nli";
  TempFolder folder;
  for (const char* name : {"sentencepiece.bpe.model", "special_tokens_map.json"})
    fs::copy_file(source / name, folder.path() / name);
  const auto bare = load_tokenizer(folder.path(), folder.path() / "sentencepiece.bpe.model");
  EXPECT_EQ(bare->vocab_size(), 3505u);
  EXPECT_EQ(bare->encode("x <s>NOTUSED y <mask>", "b").ids,
            (Ids{5, 11, 98, 0, 11, 63, 3504, 6, 6, 663, 6}));
}

TEST(SlowSentencePiece, DebertaSplitByPunctEncodesRunsSeparately) {
  const fs::path source = fixtures_dir() / "models" / "deberta-v2-tiny-nli";
  TempFolder folder;
  fs::copy_file(source / "spm.model", folder.path() / "spm.model");
  fs::copy_file(source / "added_tokens.json", folder.path() / "added_tokens.json");
  folder.write("tokenizer_config.json",
               R"({"tokenizer_class": "DebertaV2Tokenizer", "split_by_punct": true})");
  const auto split = load_tokenizer(folder.path(), folder.path() / "spm.model");
  const auto plain = fixture("deberta-v2-tiny-nli");
  Ids expected;
  for (const char* run : {"Hello", ",", "world", "!", " again"}) {
    const Ids ids = plain->encode(run, std::nullopt, {}, false).ids;
    expected.insert(expected.end(), ids.begin(), ids.end());
  }
  EXPECT_EQ(split->encode("Hello,world! again", std::nullopt, {}, false).ids, expected);
  EXPECT_NE(plain->encode("Hello,world! again", std::nullopt, {}, false).ids, expected);
  // Without added_tokens_decoder the legacy added_tokens.json still gives [MASK] its id.
  EXPECT_EQ(split->token_to_id("[MASK]"), 4000);
  EXPECT_EQ(split->encode("[MASK]", std::nullopt, {}, false).ids, Ids{4000});
}

constexpr const char* kVocab =
    "[PAD]\n[UNK]\n[CLS]\n[SEP]\n[MASK]\nhello\n##s\ni\nσασ\nhello!\nwor\n##ld\n,\n!\ncafe\n"
    "café\nCafé\nHELLO\n";

TEST(SlowWordPiece, LowerCaseFoldsTextButNotSpecialTokens) {
  TempFolder folder;
  folder.write("vocab.txt", kVocab);
  folder.write("tokenizer_config.json", R"({"tokenizer_class": "BertTokenizer"})");
  const auto tok = load_tokenizer(folder.path(), folder.path() / "vocab.txt");
  EXPECT_EQ(tok->source_kind(), "wordpiece");
  // do_lower_case defaults to true: "İ" lowercases to "i" + U+0307, whose accent is then
  // stripped; capital sigmas are lowercased one character at a time, so no final ς.
  const Encoding e = tok->encode("HELLOS [MASK] İ ΣΑΣ, WORLD!", std::nullopt);
  EXPECT_EQ(e.tokens, (Strings{"[CLS]", "hello", "##s", "[MASK]", "i", "σασ", ",", "wor", "##ld",
                               "!", "[SEP]"}));
  EXPECT_EQ(e.ids, (Ids{2, 5, 6, 4, 7, 8, 12, 10, 11, 13, 3}));
  // Accents go with lowercasing: "Café" and "café" become "cafe".
  EXPECT_EQ(tok->encode("Café", std::nullopt, {}, false).ids, Ids{14});
  // A word WordPiece cannot cover is one [UNK], as is a word over 100 characters.
  EXPECT_EQ(tok->encode("helloq", std::nullopt, {}, false).ids, Ids{1});
  EXPECT_EQ(tok->encode(std::string(101, 'i'), std::nullopt, {}, false).ids, Ids{1});
}

TEST(SlowWordPiece, AddedTokenFlagThatIsNotABooleanIsABadFile) {
  // Found by bpe_files_fuzz: a string where transformers writes a boolean escaped the loader as
  // nlohmann's type_error instead of naming the file and the key.
  for (const char* config :
       {R"({"mask_token": {"content": "[MASK]", "lstrip": "no"}})",
        R"({"added_tokens_decoder": {"4": {"content": "[MASK]", "special": "yes"}}})"}) {
    SCOPED_TRACE(config);
    TempFolder folder;
    folder.write("vocab.txt", kVocab);
    folder.write("tokenizer_config.json", config);
    try {
      load_tokenizer(folder.path(), folder.path() / "vocab.txt");
      ADD_FAILURE() << "loaded";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("tokenizer_config.json"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("is not a boolean"), std::string::npos) << e.what();
    }
  }
}

TEST(SlowWordPiece, CasedOptionsAndNeverSplit) {
  TempFolder folder;
  folder.write("vocab.txt", kVocab);
  folder.write("tokenizer_config.json",
               R"({"do_lower_case": false, "strip_accents": true, "never_split": ["hello!"]})");
  const auto tok = load_tokenizer(folder.path(), folder.path() / "vocab.txt");
  // Cased with strip_accents: "Café" loses its accent but keeps its capital (no "Cafe" entry).
  EXPECT_EQ(tok->encode("café Café HELLO", std::nullopt, {}, false).tokens,
            (Strings{"cafe", "[UNK]", "HELLO"}));
  // never_split keeps "hello!" whole and skips WordPiece for it.
  EXPECT_EQ(tok->encode("hello! hello,", std::nullopt, {}, false).tokens,
            (Strings{"hello!", "hello", ","}));
}

TEST(SlowWordPiece, NoBasicTokenizeSplitsOnWhitespaceOnly) {
  TempFolder folder;
  folder.write("vocab.txt", kVocab);
  folder.write("tokenizer_config.json", R"({"do_lower_case": false, "do_basic_tokenize": false})");
  const auto tok = load_tokenizer(folder.path(), folder.path() / "vocab.txt");
  EXPECT_EQ(tok->encode("hello! café\u2028Café", std::nullopt, {}, false).tokens,
            (Strings{"hello!", "café", "Café"}));
}

TEST(SlowWordPiece, SpecialTokenSpelledAfterCleaningIsNotSplit) {
  const auto tok = fixture("bert-tiny-nli");
  // The zero-width space is dropped by _clean_text; the word left is "[CLS]", which is in
  // all_special_tokens, so BasicTokenizer keeps it whole and WordPiece finds it in the vocab.
  const Encoding e = tok->encode("a [CL\u200bS] b", std::nullopt, {}, false);
  EXPECT_NE(std::find(e.tokens.begin(), e.tokens.end(), "[CLS]"), e.tokens.end());
  EXPECT_EQ(std::count(e.ids.begin(), e.ids.end(), 12), 1);
  // Without the rule the brackets would be split off, as they are for a non-special word.
  const Encoding other = tok->encode("a [CL\u200bX] b", std::nullopt, {}, false);
  EXPECT_EQ(std::count(other.tokens.begin(), other.tokens.end(), "["), 1);
}

}  // namespace
}  // namespace onepass::tokenizer::testing
