// decode() of the slow tokenizer sources (WordPiece vocab.txt, SentencePiece models) against
// tests/data/fixtures/decode_golden.json: transformers' tokenizer.decode of each fixture folder's
// slow tokenizer on golden input ids and hand-made lists (tools/fixtures/decode.py), with and
// without the special tokens and transformers' space cleanup, and with the folder's own cleanup
// setting (tokenizer/decoding.h). Every string exact.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "base/error.h"
#include "fixture_cases.h"
#include "tokenizer/decoding.h"
#include "tokenizer/tokenizer.h"

namespace onepass::tokenizer::testing {
namespace {

using nlohmann::json;

const json& decode_golden() {
  static const json golden = [] {
    std::ifstream in(fixtures_dir() / "decode_golden.json");
    return json::parse(in);
  }();
  return golden;
}

class SlowDecode : public ::testing::TestWithParam<std::string> {};

TEST_P(SlowDecode, MatchesTransformers) {
  const std::string& model = GetParam();
  const json& fixture = decode_golden().at("fixtures").at(model);
  const auto dir = fixtures_dir() / "models" / model;
  const auto tokenizer = load_tokenizer(dir, slow_source(model));
  const TokenizerSettings settings = read_tokenizer_settings(dir);
  EXPECT_EQ(settings.clean_up_tokenization_spaces,
            fixture.at("clean_up_tokenization_spaces").get<bool>());
  ASSERT_GE(fixture.at("cases").size(), 10u);
  for (const json& c : fixture.at("cases")) {
    SCOPED_TRACE(c.at("id").get<std::string>());
    const auto ids = c.at("ids").get<std::vector<std::int32_t>>();
    EXPECT_EQ(tokenizer->decode(ids, false), c.at("raw").get<std::string>());
    EXPECT_EQ(tokenizer->decode(ids, true), c.at("skip_special").get<std::string>());
    EXPECT_EQ(clean_up_tokenization(tokenizer->decode(ids, true)),
              c.at("skip_special_cleanup").get<std::string>());
    EXPECT_EQ(decode_text(*tokenizer, settings, ids, true), c.at("default").get<std::string>());
  }
}

std::vector<std::string> decoded_models() {
  std::vector<std::string> out;
  for (const auto& name : model_names()) {
    if (decode_golden().at("fixtures").contains(name)) out.push_back(name);
  }
  return out;
}

INSTANTIATE_TEST_SUITE_P(Fixtures, SlowDecode, ::testing::ValuesIn(decoded_models()),
                         [](const auto& info) {
                           std::string name = info.param;
                           for (auto& ch : name) {
                             if (ch == '-') ch = '_';
                           }
                           return name;
                         });

TEST(SlowDecodeIds, OutsideTheVocabularyIsRefused) {
  const auto tokenizer =
      load_tokenizer(fixtures_dir() / "models" / "bert-tiny-nli", slow_source("bert-tiny-nli"));
  const std::int32_t past_end[] = {static_cast<std::int32_t>(tokenizer->vocab_size())};
  EXPECT_THROW(tokenizer->decode(past_end, false), Error);
  const std::int32_t negative[] = {-1};
  EXPECT_THROW(tokenizer->decode(negative, false), Error);
}

}  // namespace
}  // namespace onepass::tokenizer::testing
