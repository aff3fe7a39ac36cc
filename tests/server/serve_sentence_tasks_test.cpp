// End to end: sentence similarity and the inference toolkit's sentence-transformers tasks
// through the real `onepass serve` binary. TEI's /similarity and the toolkit's
// sentence-similarity against the cosine of golden.json's embeddings (transformers' outputs),
// HF_TASK sentence-embeddings against the golden vectors (normalised only when modules.json
// ends in Normalize), HF_TASK sentence-ranking against bert-tiny-rerank's golden sigmoid scores.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "http_client.h"
#include "serve_process.h"
#include "serve_suite.h"
#include "tests/runtime/temp_dir.h"

namespace onepass::testing {
namespace {

using nlohmann::json;

const json& golden(const std::string& model) {
  static std::map<std::string, json> cache;
  auto it = cache.find(model);
  if (it == cache.end()) {
    std::ifstream in(fixture_model(model) + "/golden.json");
    it = cache.emplace(model, json::parse(in)).first;
  }
  return it->second;
}

const json& golden_case(const std::string& model, const std::string& id) {
  for (const auto& c : golden(model)["cases"])
    if (c["id"] == id) return c;
  throw std::runtime_error("no golden case " + id);
}

// The cosine of two golden vectors, in double.
double cosine(const json& a, const json& b) {
  double ab = 0, aa = 0, bb = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    ab += a[i].get<double>() * b[i].get<double>();
    aa += a[i].get<double>() * a[i].get<double>();
    bb += b[i].get<double>() * b[i].get<double>();
  }
  return ab / (std::sqrt(aa) * std::sqrt(bb));
}

void expect_near_all(const json& got, const std::vector<double>& expected) {
  ASSERT_EQ(got.size(), expected.size()) << got;
  for (std::size_t i = 0; i < expected.size(); ++i)
    EXPECT_NEAR(got[i].get<double>(), expected[i], 1e-4) << i;
}

void expect_vector(const json& got, const json& expected) {
  ASSERT_EQ(got.size(), expected.size());
  for (std::size_t i = 0; i < got.size(); ++i)
    EXPECT_NEAR(got[i].get<double>(), expected[i].get<double>(), 1e-4) << i;
}

// Sets HF_TASK while a server starts (it reads it once) and unsets it after.
class HfTask {
 public:
  explicit HfTask(const char* task) { ::setenv("HF_TASK", task, 1); }
  ~HfTask() { ::unsetenv("HF_TASK"); }
};

const std::string kEmbed = "bert-tiny-st-embed";

// source short_en, sentences german and korean: the cosines of the goldens' mean-pooled
// vectors (the folder's pooling).
std::vector<double> expected_similarities() {
  const auto& source = golden_case(kEmbed, "short_en")["embedding"]["mean"];
  std::vector<double> out;
  for (const char* id : {"german", "korean"})
    out.push_back(cosine(source, golden_case(kEmbed, id)["embedding"]["mean"]));
  return out;
}

json similarity_inputs() {
  return {{"source_sentence", golden_case(kEmbed, "short_en")["text"]},
          {"sentences",
           {golden_case(kEmbed, "german")["text"], golden_case(kEmbed, "korean")["text"]}}};
}

class ServeSentenceTasks : public ServeSuite<ServeSentenceTasks> {
 public:
  static std::vector<std::string> server_args() {
    return {"--model", "st=" + fixture_model(kEmbed), "--model",
            "rerank=" + fixture_model("bert-tiny-rerank")};
  }
};

TEST_F(ServeSentenceTasks, TeiSimilarityIsTheCosineOfTheEmbeddings) {
  const auto r =
      post_json(port(), "/similarity", json{{"inputs", similarity_inputs()}}.dump(), target("st"));
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_FALSE(r.header("x-inference-time").empty());
  expect_near_all(json::parse(r.body), expected_similarities());
}

TEST_F(ServeSentenceTasks, TeiSimilarityTakesAPromptForEveryText) {
  json inputs = {{"source_sentence", golden_case(kEmbed, "short_en")["text"]},
                 {"sentences", {golden_case(kEmbed, "german")["text"]}}};
  const auto r = post_json(
      port(), "/similarity",
      json{{"inputs", inputs}, {"parameters", {{"prompt_name", "query"}, {"truncate", true}}}}
          .dump(),
      target("st"));
  ASSERT_EQ(r.status, 200) << r.body;
  const double expected = cosine(golden_case(kEmbed, "short_en@query")["embedding"]["mean"],
                                 golden_case(kEmbed, "german@query")["embedding"]["mean"]);
  expect_near_all(json::parse(r.body), {expected});
}

TEST_F(ServeSentenceTasks, TeiSimilarityRefusesWhatItCannotAnswer) {
  auto status_of = [&](const json& body, const std::string& model = "st") {
    const auto r = post_json(port(), "/similarity", body.dump(), target(model));
    EXPECT_FALSE(json::parse(r.body)["error"].get<std::string>().empty()) << r.body;
    return r.status;
  };
  EXPECT_EQ(status_of({{"inputs", {{"source_sentence", "a"}, {"sentences", json::array()}}}}), 400);
  EXPECT_EQ(status_of({{"inputs", {{"source_sentence", ""}, {"sentences", {"b"}}}}}), 400);
  EXPECT_EQ(status_of({{"inputs", {{"sentences", {"b"}}}}}), 422);
  EXPECT_EQ(status_of({{"inputs", "a"}}), 422);
  EXPECT_EQ(status_of({{"inputs", {{"source_sentence", "a"}, {"sentences", {1}}}}}), 422);
  // 32 sentences and the source: one more than --max-client-batch-size, as TEI counts.
  EXPECT_EQ(
      status_of({{"inputs",
                  {{"source_sentence", "a"}, {"sentences", std::vector<std::string>(32, "b")}}}}),
      422);
  EXPECT_EQ(status_of({{"inputs", similarity_inputs()}}, "rerank"), 422);
}

TEST_F(ServeSentenceTasks, ToolkitAndInferenceApiSentenceSimilarity) {
  const auto toolkit =
      post_json(port(), "/invocations", json{{"inputs", similarity_inputs()}}.dump(), target("st"));
  ASSERT_EQ(toolkit.status, 200) << toolkit.body;
  expect_near_all(json::parse(toolkit.body)["similarities"], expected_similarities());
  const auto api = post_json(port(), "/models/st", json{{"inputs", similarity_inputs()}}.dump());
  ASSERT_EQ(api.status, 200) << api.body;
  expect_near_all(json::parse(api.body), expected_similarities());
  // Without HF_TASK a plain text is still feature extraction.
  const auto features =
      post_json(port(), "/invocations", json{{"inputs", "a"}}.dump(), target("st"));
  ASSERT_EQ(features.status, 200) << features.body;
  EXPECT_TRUE(json::parse(features.body)[0][0].is_array());
}

TEST(ServeHfTask, SentenceEmbeddingsAreEncodesVectors) {
  const auto& c = golden_case(kEmbed, "short_en");
  const auto& d = golden_case(kEmbed, "german");
  {
    HfTask task("sentence-embeddings");
    ServeProcess server({"--model", "st=" + fixture_model(kEmbed)});
    ASSERT_TRUE(server.wait_ready()) << server.log();
    // No Normalize module: encode()'s mean-pooled vectors as they are.
    auto r = post_json(server.port(), "/invocations", json{{"inputs", c["text"]}}.dump());
    ASSERT_EQ(r.status, 200) << r.body;
    expect_vector(json::parse(r.body)["embeddings"], c["embedding"]["mean"]);
    r = post_json(server.port(), "/invocations", json{{"inputs", {c["text"], d["text"]}}}.dump());
    ASSERT_EQ(r.status, 200) << r.body;
    const auto list = json::parse(r.body)["embeddings"];
    ASSERT_EQ(list.size(), 2u);
    expect_vector(list[0], c["embedding"]["mean"]);
    expect_vector(list[1], d["embedding"]["mean"]);
  }
  runtime::testing::TempDir dir;
  std::filesystem::copy(fixture_model(kEmbed), dir.path() / "st",
                        std::filesystem::copy_options::recursive);
  std::ofstream(dir.path() / "st" / "modules.json")
      << R"([{"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"},
             {"idx": 1, "name": "1", "path": "1_Pooling", "type": "sentence_transformers.models.Pooling"},
             {"idx": 2, "name": "2", "path": "2_Normalize", "type": "sentence_transformers.models.Normalize"}])";
  HfTask task("sentence-embeddings");
  ServeProcess server({"--model", "st=" + (dir.path() / "st").string()});
  ASSERT_TRUE(server.wait_ready()) << server.log();
  const auto r = post_json(server.port(), "/invocations", json{{"inputs", c["text"]}}.dump());
  ASSERT_EQ(r.status, 200) << r.body;
  expect_vector(json::parse(r.body)["embeddings"], c["embedding"]["mean_l2"]);
}

TEST(ServeHfTask, SentenceRankingScoresPairsAndRanksTexts) {
  HfTask task("sentence-ranking");
  ServeProcess server({"--model", "rerank=" + fixture_model("bert-tiny-rerank")});
  ASSERT_TRUE(server.wait_ready()) << server.log();
  std::vector<json> cases;
  for (const auto& c : golden("bert-tiny-rerank")["cases"])
    if (c.contains("pair") && !c.contains("truncation") && cases.size() < 4) cases.push_back(c);
  ASSERT_EQ(cases.size(), 4u);

  json pairs = json::array();
  std::vector<double> expected;
  for (const auto& c : cases) {
    pairs.push_back(c["pair"]);
    expected.push_back(c["probs"][0].get<double>());
  }
  auto r = post_json(server.port(), "/invocations", json{{"inputs", pairs}}.dump());
  ASSERT_EQ(r.status, 200) << r.body;
  expect_near_all(json::parse(r.body)["scores"], expected);

  // One pair: one score, as CrossEncoder.predict answers it.
  r = post_json(server.port(), "/invocations", json{{"inputs", cases[0]["pair"]}}.dump());
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_NEAR(json::parse(r.body)["scores"].get<double>(), expected[0], 1e-4);

  // query + texts: best first, with the texts when asked. Under the first case's query only the
  // first text is a golden pair; the others are checked for order.
  const std::string query = cases[0]["pair"][0];
  json texts = json::array();
  for (const auto& c : cases) texts.push_back(c["pair"][1]);
  r = post_json(
      server.port(), "/invocations",
      json{{"inputs", {{"query", query}, {"texts", texts}, {"return_documents", true}}}}.dump());
  ASSERT_EQ(r.status, 200) << r.body;
  const auto ranked = json::parse(r.body)["scores"];
  ASSERT_EQ(ranked.size(), texts.size());
  for (std::size_t i = 0; i < ranked.size(); ++i) {
    const auto index = ranked[i]["index"].get<std::size_t>();
    EXPECT_EQ(ranked[i]["text"], texts[index]);
    if (i > 0) {
      EXPECT_GE(ranked[i - 1]["score"].get<double>(), ranked[i]["score"].get<double>());
    }
    if (index == 0) {
      EXPECT_NEAR(ranked[i]["score"].get<double>(), expected[0], 1e-4);
    }
  }
  r = post_json(server.port(), "/invocations", json{{"inputs", {"only one"}}}.dump());
  EXPECT_EQ(r.status, 400) << r.body;
  EXPECT_NE(r.body.find("sentence-ranking"), std::string::npos) << r.body;
}

}  // namespace
}  // namespace onepass::testing
