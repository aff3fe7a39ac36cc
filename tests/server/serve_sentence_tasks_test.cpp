// End to end: sentence similarity and the inference toolkit's sentence-transformers tasks
// through the real `onepass serve` binary. TEI's /similarity and the toolkit's
// sentence-similarity against the cosine of golden.json's embeddings (transformers' outputs),
// HF_TASK sentence-embeddings against the golden vectors (normalised only when modules.json
// ends in Normalize), HF_TASK sentence-ranking against bert-tiny-rerank's golden sigmoid scores;
// a folder with Dense modules (bert-tiny-st-dense) against sentence-transformers' own pipeline
// output in every dialect that answers embeddings.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "serve_suite.h"
#include "tests/support/golden_file.h"
#include "tests/support/http_client.h"
#include "tests/support/paths.h"
#include "tests/support/serve_process.h"
#include "tests/support/temp_dir.h"
#include "tests/support/vector_compare.h"

namespace onepass::testing {
namespace {

using nlohmann::json;

const json& sentence_golden(const std::string& model) {
  static std::map<std::string, json> cache;
  auto it = cache.find(model);
  if (it == cache.end()) {
    it = cache.emplace(model, read_golden(model)).first;
  }
  return it->second;
}

const json& golden_case(const std::string& model, const std::string& id) {
  for (const auto& c : sentence_golden(model)["cases"])
    if (c["id"] == id) return c;
  throw std::runtime_error("no golden case " + id);
}

// A golden vector as doubles, for cosine().
std::vector<double> doubles(const json& vector) { return vector.get<std::vector<double>>(); }

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
    out.push_back(cosine(doubles(source), doubles(golden_case(kEmbed, id)["embedding"]["mean"])));
  return out;
}

json similarity_inputs() {
  return {{"source_sentence", golden_case(kEmbed, "short_en")["text"]},
          {"sentences",
           {golden_case(kEmbed, "german")["text"], golden_case(kEmbed, "korean")["text"]}}};
}

// CLS pooling, Dense 64 -> 48 (tanh), Dense 48 -> 24 (identity, pytorch_model.bin), Normalize;
// its golden cases carry sentence-transformers' own pipeline output.
const std::string kDense = "bert-tiny-st-dense";

class ServeSentenceTasks : public ServeSuite<ServeSentenceTasks> {
 public:
  static std::vector<std::string> server_args() {
    return {"--model", "st=" + fixture_model(kEmbed),
            "--model", "rerank=" + fixture_model("bert-tiny-rerank"),
            "--model", "dense=" + fixture_model(kDense)};
  }
};

// The dense fixture's non-empty single-text cases, in golden order.
std::vector<json> dense_cases() {
  std::vector<json> cases;
  for (const auto& c : sentence_golden(kDense)["cases"])
    if (c["text"] != "") cases.push_back(c);
  return cases;
}

json texts_of(const std::vector<json>& cases) {
  json texts = json::array();
  for (const auto& c : cases) texts.push_back(c["text"]);
  return texts;
}

TEST_F(ServeSentenceTasks, DenseModulesShapeTheEmbeddingInEveryDialect) {
  const auto cases = dense_cases();
  ASSERT_GT(cases.size(), 20u);
  const json texts = texts_of(cases);
  auto pipeline = [&](std::size_t i, const char* stage) -> const json& {
    return cases[i]["sentence_transformers"][stage];
  };

  // TEI: normalised by default (after the Dense modules), as they came with normalize false.
  auto r = post_json(port(), "/embed", json{{"inputs", texts}, {"truncate", true}}.dump(),
                     target("dense"));
  ASSERT_EQ(r.status, 200) << r.body;
  auto answer = json::parse(r.body);
  ASSERT_EQ(answer.size(), cases.size());
  for (std::size_t i = 0; i < cases.size(); ++i) {
    SCOPED_TRACE(cases[i]["id"].get<std::string>());
    ASSERT_EQ(answer[i].size(), 24u);
    expect_vector(answer[i], pipeline(i, "sentence_embedding"));
  }
  r = post_json(port(), "/embed",
                json{{"inputs", texts}, {"truncate", true}, {"normalize", false}}.dump(),
                target("dense"));
  ASSERT_EQ(r.status, 200) << r.body;
  answer = json::parse(r.body);
  for (std::size_t i = 0; i < cases.size(); ++i)
    expect_vector(answer[i], pipeline(i, "before_normalize"));

  // OpenAI (always unit length) and KServe v2 (the pooled vector as it is).
  r = post_json(port(), "/v1/embeddings",
                json{{"input", {texts[0], texts[1]}}, {"model", "dense"}}.dump());
  ASSERT_EQ(r.status, 200) << r.body;
  answer = json::parse(r.body);
  expect_vector(answer["data"][0]["embedding"], pipeline(0, "sentence_embedding"));
  expect_vector(answer["data"][1]["embedding"], pipeline(1, "sentence_embedding"));
  r = post_json(
      port(), "/v2/models/dense/infer",
      json{{"inputs",
            {{{"name", "text"}, {"shape", {1}}, {"datatype", "BYTES"}, {"data", {texts[0]}}}}}}
          .dump());
  ASSERT_EQ(r.status, 200) << r.body;
  answer = json::parse(r.body)["outputs"][0];
  EXPECT_EQ(answer["shape"], json::parse("[1,24]"));
  expect_vector(answer["data"], pipeline(0, "before_normalize"));
  EXPECT_EQ(json::parse(get(port(), "/v2/models/dense").body)["outputs"][0]["shape"],
            json::parse("[-1,24]"));

  // The Inference API (POST /) answers encode()'s vectors: its modules end in Normalize.
  r = post_json(port(), "/", json{{"inputs", {texts[0], texts[1]}}}.dump(), target("dense"));
  ASSERT_EQ(r.status, 200) << r.body;
  answer = json::parse(r.body);
  expect_vector(answer[0], pipeline(0, "sentence_embedding"));
  expect_vector(answer[1], pipeline(1, "sentence_embedding"));

  // Similarity: the cosine of the pipeline's vectors.
  r = post_json(port(), "/similarity",
                json{{"inputs", {{"source_sentence", texts[0]}, {"sentences", {texts[1]}}}}}.dump(),
                target("dense"));
  ASSERT_EQ(r.status, 200) << r.body;
  expect_near_all(json::parse(r.body), {cosine(doubles(pipeline(0, "before_normalize")),
                                               doubles(pipeline(1, "before_normalize")))});

  // `dimensions` counts the Dense output; /embed_all stays the transformer's tokens.
  r = post_json(port(), "/embed", json{{"inputs", texts[0]}, {"dimensions", 25}}.dump(),
                target("dense"));
  EXPECT_EQ(r.status, 422) << r.body;
  EXPECT_NE(r.body.find("between 1 and 24"), std::string::npos) << r.body;
  r = post_json(port(), "/v1/embeddings",
                json{{"input", texts[0]}, {"model", "dense"}, {"dimensions", 8}}.dump());
  ASSERT_EQ(r.status, 200) << r.body;
  std::vector<double> first8;
  double norm = 0;
  for (std::size_t j = 0; j < 8; ++j) {
    first8.push_back(pipeline(0, "before_normalize")[j].get<double>());
    norm += first8.back() * first8.back();
  }
  for (double& v : first8) v /= std::sqrt(norm);
  expect_near_all(json::parse(r.body)["data"][0]["embedding"], first8);
  r = post_json(port(), "/embed_all", json{{"inputs", texts[0]}}.dump(), target("dense"));
  ASSERT_EQ(r.status, 200) << r.body;
  const auto tokens = json::parse(r.body)[0];
  EXPECT_EQ(tokens.size(), cases[0]["num_tokens"].get<std::size_t>());
  EXPECT_EQ(tokens[0].size(), 64u);
  expect_vector(tokens[0], cases[0]["embedding"]["cls"]);
}

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
  const double expected =
      cosine(doubles(golden_case(kEmbed, "short_en@query")["embedding"]["mean"]),
             doubles(golden_case(kEmbed, "german@query")["embedding"]["mean"]));
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
    ServeProcess server(
        {"--model", "st=" + fixture_model(kEmbed), "--model", "dense=" + fixture_model(kDense)});
    ASSERT_TRUE(server.wait_ready()) << server.log();
    // Dense modules, then Normalize: the library's own pipeline output.
    const auto& dense = golden_case(kDense, "short_en");
    auto dense_answer = post_json(server.port(), "/invocations",
                                  json{{"inputs", dense["text"]}}.dump(), target("dense"));
    ASSERT_EQ(dense_answer.status, 200) << dense_answer.body;
    expect_vector(json::parse(dense_answer.body)["embeddings"],
                  dense["sentence_transformers"]["sentence_embedding"]);
    // No Normalize module: encode()'s mean-pooled vectors as they are.
    auto r =
        post_json(server.port(), "/invocations", json{{"inputs", c["text"]}}.dump(), target("st"));
    ASSERT_EQ(r.status, 200) << r.body;
    expect_vector(json::parse(r.body)["embeddings"], c["embedding"]["mean"]);
    r = post_json(server.port(), "/invocations", json{{"inputs", {c["text"], d["text"]}}}.dump(),
                  target("st"));
    ASSERT_EQ(r.status, 200) << r.body;
    const auto list = json::parse(r.body)["embeddings"];
    ASSERT_EQ(list.size(), 2u);
    expect_vector(list[0], c["embedding"]["mean"]);
    expect_vector(list[1], d["embedding"]["mean"]);
  }
  TempDir dir;
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
  for (const auto& c : sentence_golden("bert-tiny-rerank")["cases"])
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

// A copy of bert-tiny-rerank whose config.json gains `extra` (sentence-transformers' CrossEncoder
// keys), in `dir`.
std::string reranker_with(const TempDir& dir, const json& extra) {
  const auto folder = dir.path() / "rerank";
  std::filesystem::copy(fixture_model("bert-tiny-rerank"), folder,
                        std::filesystem::copy_options::recursive);
  std::ifstream in(folder / "config.json");
  json config = json::parse(in);
  in.close();
  config.update(extra);
  std::ofstream(folder / "config.json") << config.dump(2);
  return folder.string();
}

// The CrossEncoder activation config.json names is what CrossEncoder.predict applies (the
// toolkit's sentence-ranking) and what vLLM's /score applies: identity (the older key, as
// cross-encoder/ms-marco-MiniLM-L-6-v2 has it: raw logits) or tanh (the v4 key). TEI's /rerank
// answers the sigmoid whatever the config says, as TEI does.
TEST(ServeHfTask, SentenceRankingAndVllmScoreApplyTheCrossEncodersActivation) {
  std::vector<json> cases;
  for (const auto& c : sentence_golden("bert-tiny-rerank")["cases"])
    if (c.contains("pair") && !c.contains("truncation") && cases.size() < 3) cases.push_back(c);
  ASSERT_EQ(cases.size(), 3u);
  const std::vector<std::pair<json, double (*)(double)>> variants = {
      {{{"sbert_ce_default_activation_function", "torch.nn.modules.linear.Identity"}},
       [](double x) { return x; }},
      {{{"sentence_transformers",
         {{"activation_fn", "torch.nn.modules.activation.Tanh"}, {"version", "4.0.1"}}}},
       [](double x) { return std::tanh(x); }},
  };
  for (const auto& [extra, activation] : variants) {
    SCOPED_TRACE(extra.dump());
    TempDir dir;
    HfTask task("sentence-ranking");
    ServeProcess server({"--model", "rerank=" + reranker_with(dir, extra)});
    ASSERT_TRUE(server.wait_ready()) << server.log();
    json pairs = json::array();
    std::vector<double> expected, sigmoids, logits;
    for (const auto& c : cases) {
      pairs.push_back(c["pair"]);
      logits.push_back(c["logits"][0].get<double>());
      expected.push_back(activation(logits.back()));
      sigmoids.push_back(c["probs"][0].get<double>());
    }
    auto r = post_json(server.port(), "/invocations", json{{"inputs", pairs}}.dump());
    ASSERT_EQ(r.status, 200) << r.body;
    expect_near_all(json::parse(r.body)["scores"], expected);

    for (const bool use_activation : {true, false}) {
      r = post_json(server.port(), "/score",
                    json{{"model", "rerank"},
                         {"text_1", cases[0]["pair"][0]},
                         {"text_2", {cases[0]["pair"][1]}},
                         {"use_activation", use_activation}}
                        .dump());
      ASSERT_EQ(r.status, 200) << r.body;
      EXPECT_NEAR(json::parse(r.body)["data"][0]["score"].get<double>(),
                  use_activation ? expected[0] : logits[0], 1e-4);
    }
    r = post_json(server.port(), "/rerank",
                  json{{"query", cases[0]["pair"][0]}, {"texts", {cases[0]["pair"][1]}}}.dump());
    ASSERT_EQ(r.status, 200) << r.body;
    EXPECT_NEAR(json::parse(r.body)[0]["score"].get<double>(), sigmoids[0], 1e-4);
  }
}

}  // namespace
}  // namespace onepass::testing
