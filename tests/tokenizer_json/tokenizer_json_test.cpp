// tokenizer.json against the fixtures: every tokenizer_cases.json case (ids, type ids, offsets
// where given, word ids) and every golden.json case (fast_input_ids else input_ids, with the case's
// truncation) must match exactly.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <set>
#include <sstream>
#include <thread>

#include "base/error.h"
#include "fixture_cases.h"
#include "tests/support/fixture_catalogue.h"
#include "tokenizer/sources.h"

namespace onepass::tokenizer {
namespace {

using testing::Case;

std::string escape(const std::string& s) {
  std::ostringstream out;
  for (unsigned char c : s) {
    if (c < 0x20 || c == 0x7F) {
      out << "\\x" << std::hex << static_cast<int>(c) << std::dec;
    } else {
      out << c;
    }
  }
  return out.str();
}

template <typename T>
std::string join(const std::vector<T>& v) {
  std::ostringstream out;
  for (std::size_t i = 0; i < v.size(); ++i) out << (i ? "," : "") << v[i];
  return out.str();
}

std::string join_offsets(const std::vector<std::pair<std::uint32_t, std::uint32_t>>& v) {
  std::ostringstream out;
  for (const auto& [a, b] : v) out << "(" << a << "," << b << ")";
  return out.str();
}

// Runs all cases; returns the number that matched and reports the first mismatches.
std::size_t run_cases(const Tokenizer& tok, const std::vector<Case>& cases,
                      const std::string& what) {
  std::size_t matched = 0;
  int reported = 0;
  for (const Case& c : cases) {
    std::string problem;
    try {
      const Encoding e = tok.encode(
          c.text, c.pair ? std::optional<std::string_view>(*c.pair) : std::nullopt, c.truncation);
      if (e.ids != c.ids) {
        problem = "ids got [" + join(e.ids) + "] want [" + join(c.ids) + "] tokens [" +
                  join(e.tokens) + "]";
      } else if (c.type_ids && e.type_ids != *c.type_ids) {
        problem = "type ids got [" + join(e.type_ids) + "] want [" + join(*c.type_ids) + "]";
      } else if (c.offsets && e.offsets != *c.offsets) {
        problem = "offsets got " + join_offsets(e.offsets) + " want " + join_offsets(*c.offsets) +
                  " tokens [" + join(e.tokens) + "]";
      } else if (c.word_ids && e.word_ids != *c.word_ids) {
        problem = "word ids got [" + join(e.word_ids) + "] want [" + join(*c.word_ids) +
                  "] tokens [" + join(e.tokens) + "]";
      } else if (e.type_ids.size() != e.size() || e.offsets.size() != e.size() ||
                 e.tokens.size() != e.size() || e.special_tokens_mask.size() != e.size() ||
                 e.word_ids.size() != e.size()) {
        problem = "encoding fields differ in length";
      }
    } catch (const Error& err) {
      problem = std::string("threw: ") + err.what();
    }
    if (problem.empty()) {
      ++matched;
    } else if (reported++ < 8) {
      ADD_FAILURE() << what << " case " << c.id << " text '" << escape(c.text) << "'"
                    << (c.pair ? " pair '" + escape(*c.pair) + "'" : std::string()) << ": "
                    << problem;
    }
  }
  return matched;
}

class TokenizerJsonFixture : public ::testing::TestWithParam<std::filesystem::path> {};

// A test name from the fixture folder's name.
std::string folder_name(const ::testing::TestParamInfo<std::filesystem::path>& info) {
  std::string name = info.param.filename().string();
  for (char& c : name)
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  return name;
}

TEST_P(TokenizerJsonFixture, TokenizerCasesMatch) {
  const auto dir = GetParam();
  const auto tok = load_tokenizer_json(dir / "tokenizer.json");
  const auto cases = testing::read_cases(dir / "tokenizer_cases.json", false);
  ASSERT_FALSE(cases.empty());
  // tools/tokenizer_oracle/word_ids.mjs recorded the library's word ids in every case.
  for (const Case& c : cases) ASSERT_TRUE(c.word_ids.has_value()) << c.id;
  const std::size_t matched = run_cases(*tok, cases, dir.filename().string() + " tokenizer_cases");
  std::cout << dir.filename().string() << ": tokenizer_cases " << matched << "/" << cases.size()
            << "\n";
  EXPECT_EQ(matched, cases.size());
}

// The folders whose tokenizer.json has its own oracle cases.
std::vector<std::filesystem::path> oracle_folders() {
  std::vector<std::filesystem::path> out;
  for (const auto& dir : testing::tokenizer_json_folders())
    if (std::filesystem::exists(dir / "tokenizer_cases.json")) out.push_back(dir);
  return out;
}

INSTANTIATE_TEST_SUITE_P(Fixtures, TokenizerJsonFixture, ::testing::ValuesIn(oracle_folders()),
                         folder_name);

std::string file_text(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// A tokenizer.json without oracle cases of its own (roberta-tiny-qa carries roberta-bpe-tiny's,
// as a Hub checkpoint ships its tokenizer.json) is byte for byte one that has them.
TEST(TokenizerJson, EveryTokenizerJsonHasOracleCases) {
  const auto checked = oracle_folders();
  for (const auto& dir : testing::tokenizer_json_folders()) {
    if (std::filesystem::exists(dir / "tokenizer_cases.json")) continue;
    const std::string text = file_text(dir / "tokenizer.json");
    const bool same = std::any_of(checked.begin(), checked.end(), [&](const auto& other) {
      return file_text(other / "tokenizer.json") == text;
    });
    EXPECT_TRUE(same) << dir << ": a tokenizer.json no oracle case covers";
  }
}

// Every model fixture has a golden.json made with transformers (the tokenizer-only fixtures
// under fixtures/tokenizers have tokenizer_cases.json only): a missing one is a failure.
class TokenizerJsonModelGolden : public ::testing::TestWithParam<std::filesystem::path> {};

std::vector<std::filesystem::path> model_folders() {
  std::vector<std::filesystem::path> out;
  for (const auto& dir : testing::tokenizer_json_folders())
    if (dir.parent_path().filename() == "models") out.push_back(dir);
  return out;
}

TEST_P(TokenizerJsonModelGolden, GoldenCasesMatch) {
  const auto dir = GetParam();
  const auto cases = testing::read_cases(dir / "golden.json", true);
  ASSERT_FALSE(cases.empty()) << "no cases in " << dir / "golden.json";
  const auto tok = load_tokenizer_json(dir / "tokenizer.json");
  const std::size_t matched = run_cases(*tok, cases, dir.filename().string() + " golden");
  std::cout << dir.filename().string() << ": golden " << matched << "/" << cases.size() << "\n";
  EXPECT_EQ(matched, cases.size());
}

INSTANTIATE_TEST_SUITE_P(Fixtures, TokenizerJsonModelGolden, ::testing::ValuesIn(model_folders()),
                         folder_name);

TEST(TokenizerJson, EveryModelFixtureHasGoldenCases) { EXPECT_EQ(model_folders().size(), 14u); }

TEST(TokenizerJson, FindsEveryFixtureFolder) {
  EXPECT_EQ(testing::tokenizer_json_folders().size(), 15u);
  EXPECT_EQ(oracle_folders().size(), 7u);
}

// The token-classification pipeline reads entity words back through the decoder: ByteLevel for
// roberta-bpe-tiny and the catalogue's byte-level BPE fixtures (RoBERTa, DeBERTa (v1) and
// ModernBERT: tests/support/fixture_catalogue.h), WordPiece or Metaspace for the other model
// folders.
std::set<std::string> byte_level_folders() {
  std::set<std::string> out = {"roberta-bpe-tiny"};
  for (const auto& name : onepass::testing::fixtures_where([](const onepass::testing::Fixture& f) {
         return f.tokenizer == onepass::testing::FixtureTokenizer::kByteLevelBpe;
       }))
    out.insert(name);
  return out;
}

TEST(TokenizerJson, ReportsAByteLevelDecoder) {
  const std::set<std::string> byte_level = byte_level_folders();
  std::size_t seen = 0;
  for (const auto& dir : testing::tokenizer_json_folders()) {
    SCOPED_TRACE(dir.string());
    const bool expected = byte_level.count(dir.filename().string()) > 0;
    seen += expected;
    EXPECT_EQ(load_tokenizer_json(dir / "tokenizer.json")->byte_level_decoder(), expected);
  }
  EXPECT_EQ(seen, byte_level.size());
}

TEST(TokenizerJson, InvalidUtf8IsAClearError) {
  const auto tok =
      load_tokenizer_json(testing::fixtures_dir() / "tokenizers/roberta-bpe-tiny/tokenizer.json");
  try {
    tok->encode("ok \xC3\x28", std::nullopt);
    FAIL() << "accepted invalid UTF-8";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kInvalidInput);
    EXPECT_NE(std::string(e.what()).find("invalid UTF-8"), std::string::npos) << e.what();
  }
  EXPECT_THROW(tok->encode("fine", std::string_view("\xED\xA0\x80")), Error);
}

// encode() is const and shared between server threads: two threads over the same cases must
// produce what one thread does.
TEST(TokenizerJson, ConcurrentEncodesAgree) {
  for (const auto& dir : testing::tokenizer_json_folders()) {
    const auto tok = load_tokenizer_json(dir / "tokenizer.json");
    const auto cases = testing::read_cases(dir / "tokenizer_cases.json", false);
    std::vector<std::size_t> matched(2, 0);
    std::vector<std::thread> threads;
    for (std::size_t t = 0; t < 2; ++t) {
      threads.emplace_back([&, t] {
        for (std::size_t i = t; i < cases.size() + t; ++i) {
          const Case& c = cases[(i * 7 + t) % cases.size()];
          const auto e =
              tok->encode(c.text, c.pair ? std::optional<std::string_view>(*c.pair) : std::nullopt,
                          c.truncation);
          matched[t] += e.ids == c.ids;
        }
      });
    }
    for (auto& th : threads) th.join();
    EXPECT_EQ(matched[0], cases.size()) << dir.filename();
    EXPECT_EQ(matched[1], cases.size()) << dir.filename();
  }
}

// vocab.json + merges.txt without tokenizer.json (bpe_files_tokenizer.cpp): the folders that
// have both must give, from the BPE files alone, what the slow tokenizer gave (golden.json) and
// what the tokenizers library gives for their tokenizer.json (its oracle cases).
const std::vector<std::string> kBpeFileFolders = {"roberta-tiny-qa", "deberta-tiny-nli",
                                                  "deberta-tiny-ner"};

std::filesystem::path model_dir(const std::string& name) {
  return testing::fixtures_dir() / "models" / name;
}

TEST(BpeFiles, GoldenAndOracleCasesMatch) {
  for (const auto& name : kBpeFileFolders) {
    SCOPED_TRACE(name);
    const auto dir = model_dir(name);
    const auto tok = load_bpe_files_tokenizer(dir, dir / "vocab.json");
    const auto golden = testing::read_cases(dir / "golden.json", true);
    ASSERT_FALSE(golden.empty());
    EXPECT_EQ(run_cases(*tok, golden, name + " golden from vocab.json"), golden.size());
    // The oracle cases of an identical tokenizer.json (roberta-tiny-qa's is roberta-bpe-tiny's).
    const auto oracle = oracle_folders();
    const auto same = std::find_if(oracle.begin(), oracle.end(), [&](const auto& other) {
      return file_text(other / "tokenizer.json") == file_text(dir / "tokenizer.json");
    });
    ASSERT_NE(same, oracle.end());
    const auto cases = testing::read_cases(*same / "tokenizer_cases.json", false);
    EXPECT_EQ(run_cases(*tok, cases, name + " oracle cases from vocab.json"), cases.size());
    EXPECT_TRUE(tok->byte_level_decoder());
  }
}

// A copy of a folder without its tokenizer.json: load_tokenizer finds vocab.json by itself.
class BpeFilesOnly : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ =
        std::filesystem::temp_directory_path() /
        ("onepass-bpe-files-" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) +
         "-" + ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  void copy_from(const std::string& name, std::initializer_list<const char*> files) {
    for (const char* file : files) std::filesystem::copy_file(model_dir(name) / file, dir_ / file);
  }
  void write(const char* file, const std::string& text) {
    std::ofstream(dir_ / file, std::ios::binary) << text;
  }
  std::filesystem::path dir_;
};

TEST_F(BpeFilesOnly, AFolderWithoutTokenizerJsonIsServedFromItsBpeFiles) {
  copy_from("deberta-tiny-nli", {"vocab.json", "merges.txt", "tokenizer_config.json",
                                 "special_tokens_map.json", "golden.json"});
  const auto tok = load_tokenizer(dir_);
  const auto golden = testing::read_cases(dir_ / "golden.json", true);
  EXPECT_EQ(run_cases(*tok, golden, "deberta-tiny-nli without tokenizer.json"), golden.size());
  EXPECT_EQ(tok->source_kind(), "bpe_files");
}

// Without tokenizer_class the class comes from config.json's model_type, as AutoTokenizer's does.
TEST_F(BpeFilesOnly, TheClassComesFromModelTypeWhenTheConfigHasNone) {
  copy_from("deberta-tiny-nli", {"vocab.json", "merges.txt", "config.json", "golden.json"});
  const auto tok = load_tokenizer(dir_);
  const auto golden = testing::read_cases(dir_ / "golden.json", true);
  EXPECT_EQ(run_cases(*tok, golden, "deberta-tiny-nli, class from model_type"), golden.size());
  const auto encoding = tok->encode("a", std::string_view("b"));
  EXPECT_EQ(encoding.ids.front(), *tok->token_to_id("[CLS]"));
  EXPECT_EQ(encoding.type_ids.back(), 1);
}

TEST_F(BpeFilesOnly, RefusalsNameTheProblem) {
  copy_from("roberta-tiny-qa", {"vocab.json"});
  const auto expect_error = [&](ErrorKind kind, const std::string& words) {
    try {
      load_tokenizer(dir_);
      ADD_FAILURE() << "loaded";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), kind) << e.what();
      EXPECT_NE(std::string(e.what()).find(words), std::string::npos) << e.what();
    }
  };
  expect_error(ErrorKind::kNotFound, "merges.txt");
  write("merges.txt", "#version: 0.2\na b c\n");
  write("tokenizer_config.json", R"({"tokenizer_class": "RobertaTokenizer"})");
  expect_error(ErrorKind::kInvalidModel, "merges.txt line 2");
  write("merges.txt", "#version: 0.2\n");
  write("tokenizer_config.json", R"({"tokenizer_class": "GPT2Tokenizer"})");
  expect_error(ErrorKind::kUnsupported, "GPT2Tokenizer");
  write("tokenizer_config.json", R"({"tokenizer_class": "DebertaTokenizer"})");
  write("vocab.json", R"(["not", "an", "object"])");
  expect_error(ErrorKind::kInvalidModel, "vocab.json");
  // One stray huge id would size the id table by it: refused by name instead.
  write("vocab.json", R"({"a": 0, "b": 2000000000})");
  expect_error(ErrorKind::kInvalidModel, "the id of b");
  write("merges.txt", "#version: 0.2\nzz qq\n");
  write("vocab.json", R"({"<s>": 0, "<pad>": 1, "</s>": 2, "<unk>": 3, "a": 4, "<mask>": 5})");
  write("tokenizer_config.json", R"({"tokenizer_class": "RobertaTokenizer"})");
  expect_error(ErrorKind::kInvalidModel, "'zz qq'");
}

}  // namespace
}  // namespace onepass::tokenizer
