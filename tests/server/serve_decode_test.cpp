// End to end: TEI's /decode through the real `onepass serve` binary, on models whose folders
// hold a tokenizer.json with each decoder (WordPiece, Metaspace, ByteLevel), against what npm
// `tokenizers` decodes for the same ids (tests/data/fixtures/tokenizer_decode_golden.json); one
// list and a batch, skip_special_tokens both ways, a round trip through /tokenize, and bad ids
// refused by name.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "serve_suite.h"
#include "tests/support/http_client.h"
#include "tests/support/paths.h"
#include "tests/support/serve_process.h"

namespace onepass::testing {
namespace {

using nlohmann::json;

const std::vector<std::pair<std::string, std::string>> kModels = {
    {"bert", "bert-tiny-nli"}, {"xlmr", "xlmr-tiny-nli"}, {"roberta", "roberta-tiny-qa"}};

json decode_golden(const std::string& folder) {
  std::ifstream in(std::string(ONEPASS_TEST_DATA_DIR) + "/fixtures/tokenizer_decode_golden.json");
  return json::parse(in).at("fixtures").at("models/" + folder);
}

class ServeDecode : public ServeSuite<ServeDecode> {
 public:
  static std::vector<std::string> server_args() {
    std::vector<std::string> args;
    for (const auto& [name, folder] : kModels) {
      args.push_back("--model");
      args.push_back(name + "=" + fixture_model(folder));
    }
    return args;
  }
};

TEST_F(ServeDecode, MatchesTheTokenizersLibrary) {
  for (const auto& [name, folder] : kModels) {
    SCOPED_TRACE(name);
    const json golden = decode_golden(folder);
    json batch = json::array(), raw = json::array(), skipped = json::array();
    for (const json& c : golden.at("cases")) {
      batch.push_back(c.at("ids"));
      raw.push_back(c.at("raw"));
      skipped.push_back(c.at("skip_special"));
      if (batch.size() == 16) break;
    }
    // One list: skip_special_tokens defaults to true, as in TEI.
    const auto one = post_json(port(), "/decode", json{{"ids", batch[0]}}.dump(), target(name));
    ASSERT_EQ(one.status, 200) << one.body;
    EXPECT_EQ(json::parse(one.body), json::array({skipped[0]}));
    const auto kept =
        post_json(port(), "/decode", json{{"ids", batch}, {"skip_special_tokens", false}}.dump(),
                  target(name));
    ASSERT_EQ(kept.status, 200) << kept.body;
    EXPECT_EQ(json::parse(kept.body), raw);
    const auto left = post_json(port(), "/decode", json{{"ids", batch}}.dump(), target(name));
    ASSERT_EQ(left.status, 200) << left.body;
    EXPECT_EQ(json::parse(left.body), skipped);
  }
}

TEST_F(ServeDecode, TokenizeThenDecodeGivesTheTextBack) {
  const std::string text = "A man is playing a guitar.";
  const auto tokens =
      post_json(port(), "/tokenize", json{{"inputs", json::array({text})}}.dump(), target("xlmr"));
  ASSERT_EQ(tokens.status, 200) << tokens.body;
  json ids = json::array();
  const json encoded = json::parse(tokens.body);
  for (const json& t : encoded.at(0)) ids.push_back(t.at("id"));
  const auto r = post_json(port(), "/decode", json{{"ids", ids}}.dump(), target("xlmr"));
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(json::parse(r.body), json::array({text}));
}

TEST_F(ServeDecode, BadIdsAreRefused) {
  for (const char* body :
       {R"({"ids":[1,999999]})", R"({"ids":[-1]})", R"({"ids":["a"]})", R"({"ids":[[1],2]})",
        R"({"ids":5})", R"({})", R"({"ids":[12345678901234]})"}) {
    SCOPED_TRACE(body);
    const auto r = post_json(port(), "/decode", body, target("bert"));
    EXPECT_EQ(r.status, 422) << r.body;
    EXPECT_NE(r.body.find("error"), std::string::npos) << r.body;
  }
  const auto empty = post_json(port(), "/decode", R"({"ids":[]})", target("bert"));
  ASSERT_EQ(empty.status, 200) << empty.body;
  EXPECT_EQ(json::parse(empty.body), json::array({""}));
}

}  // namespace
}  // namespace onepass::testing
