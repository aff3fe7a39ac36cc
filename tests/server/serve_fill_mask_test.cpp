// End to end: the fill-mask pipeline of *ForMaskedLM models (BertForMaskedLM,
// DistilBertForMaskedLM) through the real `onepass serve` binary, at /invocations (the
// inference toolkit) and POST / (the Inference API), against fill_mask_golden.json: what
// transformers' FillMaskPipeline answers for the same texts (tools/fixtures/fill_mask.py).
// Scores within 1e-5, tokens, token_str and sequence exact; a list of texts batched together
// answers as each alone; bad inputs refused by name; the same model still answers SPLADE.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "serve_suite.h"
#include "tests/support/fixture_catalogue.h"
#include "tests/support/golden_file.h"
#include "tests/support/http_client.h"
#include "tests/support/paths.h"
#include "tests/support/serve_process.h"

namespace onepass::testing {
namespace {

using nlohmann::json;

// The pipeline's answer for one text: the flat list for one mask, one list per mask otherwise.
json expected_answer(const json& c) {
  return c["single_mask"].get<bool>() ? c["predictions"][0] : c["predictions"];
}

void expect_same_predictions(const json& got, const json& want) {
  ASSERT_TRUE(got.is_array()) << got.dump();
  ASSERT_EQ(got.size(), want.size()) << got.dump();
  for (std::size_t i = 0; i < want.size(); ++i) {
    SCOPED_TRACE(i);
    if (want[i].is_array()) {
      expect_same_predictions(got[i], want[i]);
      continue;
    }
    EXPECT_EQ(got[i]["token"], want[i]["token"]);
    EXPECT_EQ(got[i]["token_str"], want[i]["token_str"]);
    EXPECT_EQ(got[i]["sequence"], want[i]["sequence"]);
    EXPECT_NEAR(got[i]["score"].get<double>(), want[i]["score"].get<double>(), 1e-5);
  }
}

json parameters_of(const json& c) {
  json parameters = json::object();
  if (c.contains("top_k")) parameters["top_k"] = c["top_k"];
  if (c.contains("targets")) parameters["targets"] = c["targets"];
  return parameters;
}

// Every fixture with a fill_mask_golden.json (tests/support/fixture_catalogue.h), served under
// its folder's name.
const std::vector<std::string> kFillMaskModels =
    fixtures_where([](const Fixture& f) { return f.has(kFillMaskGolden); });

// The BERT one, whose mask token is [MASK]: what the refusals and the SPLADE check ask.
const std::string kBertMaskedLm = "bert-tiny-splade";

class ServeFillMask : public ServeSuite<ServeFillMask> {
 public:
  static std::vector<std::string> server_args() {
    std::vector<std::string> args;
    for (const auto& folder : kFillMaskModels) {
      args.push_back("--model");
      args.push_back(folder + "=" + fixture_model(folder));
    }
    return args;
  }
};

TEST_F(ServeFillMask, EveryGoldenCaseAtInvocations) {
  for (const auto& name : kFillMaskModels) {
    SCOPED_TRACE(name);
    const json g = read_fill_mask_golden(name);
    ASSERT_GE(g["cases"].size(), 10u);
    for (const auto& c : g["cases"]) {
      SCOPED_TRACE(c["id"].get<std::string>());
      const json body = {{"inputs", c["text"]}, {"parameters", parameters_of(c)}};
      const auto r = post_json(port(), "/invocations", body.dump(), target(name));
      ASSERT_EQ(r.status, 200) << r.body;
      expect_same_predictions(json::parse(r.body), expected_answer(c));
    }
  }
}

TEST_F(ServeFillMask, ListOfTextsIsBatchedAndAnsweredInOrder) {
  for (const auto& name : kFillMaskModels) {
    SCOPED_TRACE(name);
    const json g = read_fill_mask_golden(name);
    json texts = json::array(), expected = json::array();
    for (const auto& c : g["cases"]) {
      if (c.contains("top_k") || c.contains("targets")) continue;
      texts.push_back(c["text"]);
      expected.push_back(expected_answer(c));
    }
    ASSERT_GE(texts.size(), 3u);
    // The Inference API (POST /models/{model}) answers the same list.
    for (const std::string& path : std::vector<std::string>{"/invocations", "/models/" + name}) {
      SCOPED_TRACE(path);
      const auto r = post_json(port(), path, json{{"inputs", texts}}.dump(), target(name));
      ASSERT_EQ(r.status, 200) << r.body;
      expect_same_predictions(json::parse(r.body), expected);
    }
    // A list of one is answered as its one text, as the pipeline unwraps it.
    const auto one =
        post_json(port(), "/invocations", json{{"inputs", {texts[0]}}}.dump(), target(name));
    ASSERT_EQ(one.status, 200) << one.body;
    expect_same_predictions(json::parse(one.body), expected[0]);
  }
}

TEST_F(ServeFillMask, BadInputsAreRefusedByName) {
  struct Refusal {
    json body;
    std::string names;
  };
  for (const auto& [body, names] : std::vector<Refusal>{
           {{{"inputs", "no mask here"}}, "[MASK]"},
           {{{"inputs", {"a [MASK] b", "no mask"}}}, "[MASK]"},
           {{{"inputs", "a [MASK]"}, {"parameters", {{"top_k", 0}}}}, "top_k"},
           {{{"inputs", "a [MASK]"}, {"parameters", {{"top_k", "3"}}}}, "top_k"},
           {{{"inputs", "a [MASK]"}, {"parameters", {{"targets", 5}}}}, "targets"},
           {{{"inputs", "a [MASK]"}, {"parameters", {{"targets", json::array()}}}}, "targets"},
           {{{"inputs", "a [MASK]"}, {"parameters", {{"targets", {""}}}}}, "target"},
           {{{"inputs", {{"text", "a [MASK]"}, {"text_pair", "b"}}}}, "inputs"},
       }) {
    SCOPED_TRACE(body.dump());
    const auto r = post_json(port(), "/invocations", body.dump(), target(kBertMaskedLm));
    EXPECT_GE(r.status, 400) << r.body;
    EXPECT_LT(r.status, 500) << r.body;
    EXPECT_NE(r.body.find(names), std::string::npos) << r.body;
  }
  // The server goes on answering.
  const auto ok =
      post_json(port(), "/invocations", R"({"inputs":"a [MASK] b"})", target(kBertMaskedLm));
  EXPECT_EQ(ok.status, 200) << ok.body;
}

TEST_F(ServeFillMask, TheSameModelStillAnswersSparseEmbeddings) {
  const auto r =
      post_json(port(), "/embed_sparse", R"({"inputs":"a [MASK] b"})", target(kBertMaskedLm));
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_FALSE(json::parse(r.body)[0].empty());
}

}  // namespace
}  // namespace onepass::testing
