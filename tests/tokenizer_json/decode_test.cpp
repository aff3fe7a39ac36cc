// decode() of tokenizer.json files against tests/data/fixtures/tokenizer_decode_golden.json: the
// `tokenizers` library's decode (npm tokenizers, tools/tokenizer_oracle/decode.mjs) of the
// fixtures' case ids, with and without special tokens, for the WordPiece, Metaspace and
// ByteLevel decoders; and the other decoders (BPEDecoder, Replace, ByteFallback, Fuse, Strip,
// Sequence, Metaspace's prepend schemes, none) in small tokenizer.json documents
// (tests/data/fixtures/tokenizers/decoders_golden.json, tools/tokenizer_oracle/decoders.mjs).
// Every string exact.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <set>

#include "base/error.h"
#include "fixture_cases.h"
#include "tokenizer/hf_json/tokenizer_json.h"
#include "tokenizer/sources.h"

namespace onepass::tokenizer {
namespace {

using nlohmann::json;
using testing::fixtures_dir;

const json& decode_golden() {
  static const json golden = [] {
    std::ifstream in(fixtures_dir() / "tokenizer_decode_golden.json");
    return json::parse(in);
  }();
  return golden;
}

TEST(TokenizerJsonDecode, MatchesTheTokenizersLibrary) {
  const json& fixtures = decode_golden().at("fixtures");
  ASSERT_GE(fixtures.size(), 7u);
  std::set<std::string> decoders;
  for (const auto& [folder, fixture] : fixtures.items()) {
    SCOPED_TRACE(folder);
    decoders.insert(fixture.at("decoder").at("type").get<std::string>());
    const auto tokenizer = load_tokenizer_json(fixtures_dir() / folder / "tokenizer.json");
    ASSERT_GE(fixture.at("cases").size(), 20u);
    for (const json& c : fixture.at("cases")) {
      SCOPED_TRACE(c.at("id").get<std::string>());
      const auto ids = c.at("ids").get<std::vector<std::int32_t>>();
      EXPECT_EQ(tokenizer->decode(ids, false), c.at("raw").get<std::string>());
      EXPECT_EQ(tokenizer->decode(ids, true), c.at("skip_special").get<std::string>());
    }
  }
  EXPECT_EQ(decoders, (std::set<std::string>{"WordPiece", "Metaspace", "ByteLevel"}));
}

TEST(TokenizerJsonDecode, EveryDecoderMatchesTheTokenizersLibrary) {
  std::ifstream in(fixtures_dir() / "tokenizers" / "decoders_golden.json");
  const json golden = json::parse(in);
  ASSERT_GE(golden.at("decoders").size(), 9u);
  for (const auto& [name, entry] : golden.at("decoders").items()) {
    SCOPED_TRACE(name);
    const auto tokenizer = hf_json::parse_tokenizer_json(entry.at("tokenizer").dump());
    for (const json& c : entry.at("cases")) {
      const auto ids = c.at("ids").get<std::vector<std::int32_t>>();
      SCOPED_TRACE(c.at("ids").dump());
      EXPECT_EQ(tokenizer->decode(ids, false), c.at("raw").get<std::string>());
      EXPECT_EQ(tokenizer->decode(ids, true), c.at("skip_special").get<std::string>());
    }
  }
}

TEST(TokenizerJsonDecode, UnknownDecoderLoadsButRefusesToDecode) {
  std::ifstream in(fixtures_dir() / "tokenizers" / "decoders_golden.json");
  json doc = json::parse(in).at("decoders").at("none").at("tokenizer");
  doc["decoder"] = {{"type", "CTC"}, {"pad_token", "<pad>"}};
  const auto tokenizer = hf_json::parse_tokenizer_json(doc.dump());
  EXPECT_EQ(tokenizer->encode("ab", std::nullopt).ids.empty(), false);
  const std::int32_t ids[] = {2};
  try {
    tokenizer->decode(ids, false);
    ADD_FAILURE() << "decoded with an unknown decoder";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kUnsupported);
    EXPECT_NE(std::string(e.what()).find("CTC"), std::string::npos) << e.what();
  }
}

TEST(TokenizerJsonDecode, IdOutsideTheVocabularyIsRefused) {
  const auto tokenizer =
      load_tokenizer_json(fixtures_dir() / "models" / "bert-tiny-nli" / "tokenizer.json");
  const std::int32_t past_end[] = {static_cast<std::int32_t>(tokenizer->vocab_size())};
  try {
    tokenizer->decode(past_end, false);
    ADD_FAILURE() << "decoded an id past the vocabulary";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kInvalidInput);
  }
}

}  // namespace
}  // namespace onepass::tokenizer
