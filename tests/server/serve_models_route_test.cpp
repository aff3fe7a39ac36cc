// End to end through `onepass serve` co-hosting three fixture models: POST /models/{name} is
// the Hugging Face Inference API for that one model, byte for byte what POST / answers when the
// target header names the same model (API.md), errors included.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "serve_suite.h"
#include "tests/support/http_client.h"
#include "tests/support/paths.h"
#include "tests/support/serve_process.h"

namespace onepass::testing {
namespace {

using nlohmann::json;

class ServeModelsRoute : public ServeSuite<ServeModelsRoute> {
 public:
  static std::vector<std::string> server_args() {
    return {"--model", "nli=" + fixture_model("bert-tiny-nli"),
            "--model", "embed=" + fixture_model("bert-tiny-embed"),
            "--model", "rerank=" + fixture_model("bert-tiny-rerank")};
  }
};

struct Case {
  std::string model;
  json body;
  int status;
};

TEST_F(ServeModelsRoute, AnswersExactlyAsTheRootRouteForThatModel) {
  const std::string premise = "A man is playing a guitar on a busy street corner.";
  std::string long_text;
  for (int i = 0; i < 400; ++i) long_text += "guitar street corner ";
  const std::vector<Case> cases = {
      {"nli", {{"inputs", premise}}, 200},
      {"nli", {{"inputs", {premise, "Nobody is outside."}}}, 200},
      {"nli", {{"inputs", {{"text", premise}, {"text_pair", "Someone makes music."}}}}, 200},
      {"nli", {{"inputs", premise}, {"parameters", {{"top_k", 1}}}}, 200},
      {"nli", {{"inputs", premise}, {"parameters", {{"function_to_apply", "none"}}}}, 200},
      {"nli",
       {{"inputs", premise}, {"parameters", {{"candidate_labels", {"music", "cooking"}}}}},
       200},
      {"nli",
       {{"inputs", {premise, "The soup is hot."}},
        {"parameters", {{"candidate_labels", "music,cooking"}, {"multi_label", true}}}},
       200},
      {"rerank", {{"inputs", {{"text", "guitar"}, {"text_pair", premise}}}}, 200},
      {"embed", {{"inputs", premise}}, 200},
      {"embed", {{"inputs", {premise, "hello"}}}, 200},
      // Bad input gets the same status and the same Inference API error body.
      {"nli", {{"inputs", ""}}, 200},
      {"nli", {{"inputs", long_text}}, 422},
      {"nli", {{"inputs", json::array()}}, 400},
      {"nli", {{"inputs", 7}}, 400},
      {"embed", {{"inputs", premise}, {"parameters", {{"max_length", "x"}}}}, 400},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.model + " " + c.body.dump());
    const auto root = post_json(port(), "/", c.body.dump(), target(c.model));
    const auto named = post_json(port(), "/models/" + c.model, c.body.dump());
    EXPECT_EQ(root.status, c.status) << root.body;
    EXPECT_EQ(named.status, root.status) << named.body;
    EXPECT_EQ(named.body, root.body);
    EXPECT_EQ(named.header("content-type"), root.header("content-type"));
  }
}

TEST_F(ServeModelsRoute, TheShapesThatHuggingFaceClientsCheck) {
  const std::string premise = "A man is playing a guitar on a busy street corner.";
  // Classifier: [[{label, score}, ...every label sorted]].
  auto r = post_json(port(), "/models/nli", json{{"inputs", premise}}.dump());
  ASSERT_EQ(r.status, 200) << r.body;
  auto body = json::parse(r.body);
  ASSERT_TRUE(body.is_array() && body.size() == 1u && body[0].size() == 3u) << r.body;
  double sum = 0;
  for (const auto& e : body[0]) sum += e["score"].get<double>();
  EXPECT_NEAR(sum, 1.0, 1e-5);
  EXPECT_GE(body[0][0]["score"].get<double>(), body[0][1]["score"].get<double>());
  // The same scores as the toolkit's answer on /invocations for that model.
  r = post_json(port(), "/invocations",
                json{{"inputs", premise}, {"parameters", {{"top_k", nullptr}}}}.dump(),
                target("nli"));
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(json::parse(r.body), body[0]);
  // Zero-shot, one text: one {sequence, labels, scores} object, as the pipeline answers it
  // (@huggingface/inference and huggingface_hub read "labels"/"scores" from an object).
  const json zero_shot = {{"inputs", premise},
                          {"parameters", {{"candidate_labels", {"music", "cooking"}}}}};
  r = post_json(port(), "/models/nli", zero_shot.dump());
  ASSERT_EQ(r.status, 200) << r.body;
  body = json::parse(r.body);
  ASSERT_TRUE(body.is_object()) << r.body;
  EXPECT_EQ(body["sequence"], premise);
  EXPECT_EQ(body["labels"].size(), 2u);
  const auto toolkit = post_json(port(), "/invocations", zero_shot.dump(), target("nli"));
  EXPECT_EQ(json::parse(toolkit.body), body);
  // Embedder: the pooled vector, the same one TEI's /embed gives.
  r = post_json(port(), "/models/embed", json{{"inputs", premise}}.dump());
  ASSERT_EQ(r.status, 200) << r.body;
  body = json::parse(r.body);
  const auto tei = post_json(
      port(), "/embed", json{{"inputs", premise}, {"normalize", false}}.dump(), target("embed"));
  ASSERT_EQ(tei.status, 200) << tei.body;
  const auto tei_vector = json::parse(tei.body)[0];
  ASSERT_EQ(body.size(), tei_vector.size());
  for (std::size_t i = 0; i < body.size(); ++i)
    EXPECT_NEAR(body[i].get<double>(), tei_vector[i].get<double>(), 1e-6);
}

TEST_F(ServeModelsRoute, UnknownOrHostileNamesAreNotFoundAndTheRootStillAsksToChoose) {
  const std::string body = json{{"inputs", "hello"}}.dump();
  const std::vector<std::string> names = {"missing", "%2e%2e", "..",
                                          "a%00b",   "%zz",    std::string(300, 'm')};
  for (const auto& name : names) {
    SCOPED_TRACE(name);
    const auto r = post_json(port(), "/models/" + name, body);
    EXPECT_EQ(r.status, 404) << r.body;
    ASSERT_TRUE(json::accept(r.body)) << r.body;
    EXPECT_TRUE(json::parse(r.body)["error"].is_string()) << r.body;
  }
  // The path names the model: a target header naming another one does not override it.
  auto r = post_json(port(), "/models/embed", body, target("nli"));
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_TRUE(json::parse(r.body)[0].is_number()) << r.body;
  // Without a name, several served models still need choosing.
  r = post_json(port(), "/", body);
  EXPECT_EQ(r.status, 404) << r.body;
  EXPECT_NE(r.body.find("several models"), std::string::npos) << r.body;
  // Other methods on the path are 405 (without model management the describe route is off).
  r = http_request(port(), "PUT", "/models/nli", body);
  EXPECT_EQ(r.status, 405) << r.body;
  // Counted under its own route label.
  const auto metrics = get(port(), "/metrics");
  EXPECT_NE(metrics.body.find("route=\"/models/{model}\""), std::string::npos);
}

}  // namespace
}  // namespace onepass::testing
