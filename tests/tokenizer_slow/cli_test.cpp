// `onepass tokenize` end to end through the real binary: every golden case of every fixture
// model through each slow source chosen with --tokenizer, the tokenizer-only folder, and bad
// lines (one error line naming the line, exit code 2, earlier lines already answered).
#include <gtest/gtest.h>

#include <array>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "fixture_cases.h"
#include "tests/support/cli_runner.h"

namespace onepass::tokenizer::testing {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using onepass::testing::CliResult;
using onepass::testing::run_onepass;

std::vector<json> lines_of(const std::string& text) {
  std::vector<json> out;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) out.push_back(json::parse(line));
  return out;
}

std::string request_line(const FixtureCase& c) {
  json request{{"text", c.text}};
  if (c.pair) request["text_pair"] = *c.pair;
  if (c.truncation.max_length) {
    request["max_length"] = c.truncation.max_length;
    request["truncation"] = c.truncation.strategy == TruncationStrategy::kOnlyFirst ? "only_first"
                            : c.truncation.strategy == TruncationStrategy::kOnlySecond
                                ? "only_second"
                                : "longest_first";
  }
  return request.dump() + "\n";
}

TEST(TokenizeCommand, EveryGoldenCaseThroughEachSlowSource) {
  for (const auto& model : model_names()) {
    const auto cases = read_cases(model, "golden.json");
    std::string input;
    for (const auto& c : cases) input += request_line(c);
    const fs::path dir = fixtures_dir() / "models" / model;
    // The bare file name is looked up in the folder; an absolute path works as well.
    for (const std::string& file :
         {slow_source(model).filename().string(), slow_source(model).string()}) {
      const CliResult run =
          run_onepass({"tokenize", "--model", dir.string(), "--tokenizer", file}, input);
      ASSERT_EQ(run.exit_code, 0) << model << ": " << run.err;
      const auto outputs = lines_of(run.out);
      ASSERT_EQ(outputs.size(), cases.size()) << model;
      for (std::size_t i = 0; i < cases.size(); ++i) {
        const json& out = outputs[i];
        EXPECT_EQ(out.at("input_ids").get<std::vector<std::int32_t>>(), cases[i].input_ids)
            << model << " " << cases[i].id;
        if (cases[i].token_type_ids) {
          EXPECT_EQ(out.at("token_type_ids").get<std::vector<std::int32_t>>(),
                    *cases[i].token_type_ids)
              << model << " " << cases[i].id;
        }
        EXPECT_EQ(out.at("tokens").get<std::vector<std::string>>(), *cases[i].tokens)
            << model << " " << cases[i].id;
        EXPECT_EQ(out.at("attention_mask").get<std::vector<int>>(),
                  std::vector<int>(cases[i].input_ids.size(), 1));
        EXPECT_EQ(out.at("offsets").size(), cases[i].input_ids.size());
      }
    }
  }
}

// Without --tokenizer a folder with tokenizer.json uses it (the fast tokenizer's ids:
// fast_input_ids where the goldens list them); --tokenizer tokenizer.json says so explicitly.
TEST(TokenizeCommand, TokenizerJsonIsTheDefaultSource) {
  for (const auto& model : model_names()) {
    const fs::path dir = fixtures_dir() / "models" / model;
    if (!fs::exists(dir / "tokenizer.json")) continue;
    std::ifstream in(dir / "golden.json");
    const auto golden = json::parse(in).at("cases");
    const auto cases = read_cases(model, "golden.json");
    std::string input;
    for (const auto& c : cases) input += request_line(c);
    for (const std::vector<std::string>& extra :
         {std::vector<std::string>{}, std::vector<std::string>{"--tokenizer", "tokenizer.json"}}) {
      std::vector<std::string> args{"tokenize", "--model", dir.string()};
      args.insert(args.end(), extra.begin(), extra.end());
      const CliResult run = run_onepass(args, input);
      ASSERT_EQ(run.exit_code, 0) << model << ": " << run.err;
      const auto outputs = lines_of(run.out);
      ASSERT_EQ(outputs.size(), cases.size()) << model;
      for (std::size_t i = 0; i < cases.size(); ++i) {
        const json& expected = golden[i].contains("fast_input_ids") ? golden[i]["fast_input_ids"]
                                                                    : golden[i]["input_ids"];
        EXPECT_EQ(outputs[i].at("input_ids"), expected) << model << " " << cases[i].id;
      }
    }
  }
}

TEST(TokenizeCommand, OffsetsPointIntoTheText) {
  const fs::path dir = fixtures_dir() / "models" / "bert-tiny-nli";
  const CliResult run =
      run_onepass({"tokenize", "--model", dir.string(), "--tokenizer", "vocab.txt"},
                  R"({"text": "Hi [SEP] Wörld", "text_pair": "ok"})"
                  "\n");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const auto out = lines_of(run.out).at(0);
  const auto tokens = out.at("tokens").get<std::vector<std::string>>();
  const auto offsets = out.at("offsets").get<std::vector<std::array<int, 2>>>();
  ASSERT_EQ(tokens.front(), "[CLS]");
  EXPECT_EQ(offsets.front(), (std::array<int, 2>{0, 0}));
  // "[SEP]" written in the text is matched as the special token at code points 3..8.
  const auto text_sep = std::find(tokens.begin() + 1, tokens.end(), "[SEP]");
  ASSERT_NE(text_sep, tokens.end());
  EXPECT_EQ(offsets.at(static_cast<std::size_t>(text_sep - tokens.begin())),
            (std::array<int, 2>{3, 8}));
  // "Wörld" spans 9..14; the pair's "ok" counts from 0 and ends at 2; added [SEP]s are {0, 0}.
  const auto pair_sep = std::find(text_sep + 1, tokens.end(), "[SEP]");
  ASSERT_NE(pair_sep, tokens.end());
  const auto pair_sep_index = static_cast<std::size_t>(pair_sep - tokens.begin());
  EXPECT_EQ(offsets.at(pair_sep_index - 1)[1], 14);
  EXPECT_EQ(offsets.at(pair_sep_index), (std::array<int, 2>{0, 0}));
  EXPECT_EQ(offsets.at(pair_sep_index + 1)[0], 0);
  EXPECT_EQ(offsets.at(tokens.size() - 2)[1], 2);
  EXPECT_EQ(offsets.back(), (std::array<int, 2>{0, 0}));
}

TEST(TokenizeCommand, TokenizerOnlyFolderNeedsNoWeights) {
  // Every case of the byte-level BPE folder (no config.json, no weights): ids, type ids and
  // code point offsets of the `tokenizers` library, truncated cases included.
  const fs::path dir = fixtures_dir() / "tokenizers" / "roberta-bpe-tiny";
  ASSERT_FALSE(fs::exists(dir / "config.json"));
  std::ifstream in(dir / "tokenizer_cases.json");
  const auto cases = json::parse(in).at("cases");
  std::string input;
  for (const auto& c : cases) {
    json request;
    if (c.contains("pair")) {
      request = {{"text", c["pair"][0]}, {"text_pair", c["pair"][1]}};
    } else {
      request = {{"text", c.value("prompt", std::string()) + c.at("text").get<std::string>()}};
    }
    if (c.contains("max_length")) {
      request["max_length"] = c["max_length"];
      request["truncation"] = c.at("truncation");
    }
    input += request.dump() + "\n";
  }
  const CliResult run = run_onepass({"tokenize", "--model", dir.string()}, input);
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const auto outputs = lines_of(run.out);
  ASSERT_EQ(outputs.size(), cases.size());
  std::size_t matched = 0;
  for (std::size_t i = 0; i < cases.size(); ++i) {
    const bool ok = outputs[i].at("input_ids") == cases[i].at("input_ids") &&
                    outputs[i].at("token_type_ids") == cases[i].at("token_type_ids") &&
                    outputs[i].at("offsets") == cases[i].at("offsets");
    EXPECT_TRUE(ok) << cases[i].at("id") << ": " << outputs[i].dump();
    matched += ok ? 1 : 0;
  }
  std::printf("roberta-bpe-tiny through onepass tokenize: %zu of %zu cases match\n", matched,
              cases.size());
}

struct BadLine {
  std::string line;
  std::string message;  // a part of the expected error
};

TEST(TokenizeCommand, BadLineStopsWithExitCode2) {
  const fs::path dir = fixtures_dir() / "models" / "deberta-v2-tiny-nli";
  const std::vector<BadLine> bad = {
      {"{\"text\": \"unterminated}", "not valid JSON"},
      {"[\"text\"]", "expected a JSON object"},
      {"{\"text_pair\": \"no first text\"}", "missing \"text\""},
      {"{\"text\": 42}", "\"text\" must be a string"},
      {"{\"text\": \"a\", \"text_pair\": [1]}", "\"text_pair\" must be a string"},
      {"{\"text\": \"a\", \"max_length\": -3}", "\"max_length\" must be a positive integer"},
      {"{\"text\": \"a\", \"max_length\": 8, \"truncation\": \"middle_out\"}",
       "unknown truncation"},
      {"{\"text\": \"a\", \"truncation\": \"only_first\"}", "needs \"max_length\""},
      {"{\"text\": \"a\", \"lenght\": 3}", "unknown field \"lenght\""},
      {"{\"text\": \"bad \xff byte\"}", "not valid JSON"},
      {"{\"text\": \"one two three four\", \"text_pair\": \"x\", \"max_length\": 5, "
       "\"truncation\": \"only_second\"}",
       "cannot truncate"},
      {"{\"text\": \"one two three four five\", \"max_length\": 4, \"truncation\": "
       "\"only_second\"}",
       "needs a text pair"},
  };
  for (const auto& b : bad) {
    const std::string input =
        "{\"text\": \"fine\"}\n\n" + b.line + "\n{\"text\": \"never read\"}\n";
    const CliResult run =
        run_onepass({"tokenize", "--model", dir.string(), "--tokenizer", "spm.model"}, input);
    EXPECT_EQ(run.exit_code, 2) << b.line;
    EXPECT_EQ(std::count(run.err.begin(), run.err.end(), '\n'), 1) << run.err;
    EXPECT_NE(run.err.find("line 3: "), std::string::npos) << run.err;
    EXPECT_NE(run.err.find(b.message), std::string::npos) << run.err;
    // The line before the bad one was answered; nothing after it.
    EXPECT_EQ(lines_of(run.out).size(), 1u) << b.line;
  }
}

TEST(TokenizeCommand, MissingFolderOrFileIsAnError) {
  CliResult run = run_onepass({"tokenize", "--model", "/nonexistent/onepass-model"}, "");
  EXPECT_EQ(run.exit_code, 2);
  // Model references resolve before any tokenizer is looked for: a path that does not exist
  // and is no Hub id is named as such.
  EXPECT_NE(run.err.find("/nonexistent/onepass-model"), std::string::npos) << run.err;
  EXPECT_NE(run.err.find("neither an existing folder nor a Hub id"), std::string::npos) << run.err;
  const fs::path dir = fixtures_dir() / "models" / "bert-tiny-nli";
  run = run_onepass({"tokenize", "--model", dir.string(), "--tokenizer", "spm.model"}, "");
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_NE(run.err.find("spm.model"), std::string::npos) << run.err;
  run = run_onepass({"tokenize", "--model", dir.string(), "--tokenizer", "config.json"}, "");
  EXPECT_EQ(run.exit_code, 2) << run.err;
}

}  // namespace
}  // namespace onepass::tokenizer::testing
