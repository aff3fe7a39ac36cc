// Every dialect's request and answer shapes over real sockets, against a FakeService whose
// outputs are a known function of the input (so each expected value is computed here).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <nlohmann/json.hpp>

#include "api/common/scores.h"
#include "in_process_server.h"
#include "tests/support/http_client.h"

namespace onepass::testing {
namespace {

using nlohmann::json;

runtime::InferenceItem text_item(std::string text, std::optional<std::string> pair = std::nullopt) {
  runtime::InferenceItem item;
  item.text = std::move(text);
  item.text_pair = std::move(pair);
  return item;
}

const std::vector<std::string> kLabels = {"contradiction", "entailment", "neutral"};

TEST(Dialects, ToolkitClassifierShapes) {
  InProcessServer server;
  const auto port = server.port();
  const auto probs = api::softmax(FakeService::logits(text_item("a b"), 3));
  const auto top = std::max_element(probs.begin(), probs.end()) - probs.begin();

  // A lone string: the pipeline's list of one {label, score}.
  auto r = post_json(port, "/invocations", R"({"inputs":"a b"})", target("nli"));
  ASSERT_EQ(r.status, 200) << r.body;
  auto body = json::parse(r.body);
  ASSERT_TRUE(body.is_array());
  ASSERT_EQ(body.size(), 1u);
  EXPECT_EQ(body[0]["label"], kLabels[top]);
  EXPECT_FLOAT_EQ(body[0]["score"].get<float>(), probs[top]);

  // A pair object: one object.
  r = post_json(port, "/invocations", R"({"inputs":{"text":"p","text_pair":"h"}})", target("nli"));
  ASSERT_EQ(r.status, 200) << r.body;
  body = json::parse(r.body);
  const auto pair_probs = api::softmax(FakeService::logits(text_item("p", "h"), 3));
  const auto pair_top = std::max_element(pair_probs.begin(), pair_probs.end()) - pair_probs.begin();
  ASSERT_TRUE(body.is_object());
  EXPECT_EQ(body["label"], kLabels[pair_top]);

  // A bare body is the inputs; a list gives one answer per input.
  r = post_json(port, "/invocations", R"(["x","y z"])", target("nli"));
  ASSERT_EQ(r.status, 200) << r.body;
  body = json::parse(r.body);
  ASSERT_EQ(body.size(), 2u);
  EXPECT_TRUE(body[0].is_object());

  // top_k null: every label sorted; function_to_apply none: raw logits.
  r = post_json(port, "/invocations",
                R"({"inputs":"a b","parameters":{"top_k":null,"function_to_apply":"none"}})",
                target("nli"));
  ASSERT_EQ(r.status, 200) << r.body;
  body = json::parse(r.body);
  ASSERT_EQ(body.size(), 3u);
  const auto raw = FakeService::logits(text_item("a b"), 3);
  for (const auto& entry : body) {
    const auto index =
        std::find(kLabels.begin(), kLabels.end(), entry["label"].get<std::string>()) -
        kLabels.begin();
    EXPECT_FLOAT_EQ(entry["score"].get<float>(), raw[index]);
  }
  EXPECT_GE(body[0]["score"].get<float>(), body[1]["score"].get<float>());
  EXPECT_GE(body[1]["score"].get<float>(), body[2]["score"].get<float>());
}

TEST(Dialects, InferenceApiNestsOneListPerInput) {
  InProcessServer server;
  auto r = post_json(server.port(), "/", R"({"inputs":["a","b"]})", target("nli"));
  ASSERT_EQ(r.status, 200) << r.body;
  auto body = json::parse(r.body);
  ASSERT_EQ(body.size(), 2u);
  ASSERT_EQ(body[0].size(), 3u);
  float sum = 0;
  for (const auto& e : body[0]) sum += e["score"].get<float>();
  EXPECT_NEAR(sum, 1.0f, 1e-5);
  r = post_json(server.port(), "/", R"({"inputs":"a"})", target("embed"));
  ASSERT_EQ(r.status, 200) << r.body;
  body = json::parse(r.body);
  ASSERT_EQ(body.size(), static_cast<std::size_t>(FakeService::kHidden));
  EXPECT_FLOAT_EQ(body[0].get<float>(), FakeService::pooled(text_item("a"))[0]);
}

TEST(Dialects, ZeroShotMatchesHandComputedScores) {
  InProcessServer server;
  const std::vector<std::string> labels = {"sports", "cooking"};
  auto entail = [&](const std::string& label) {
    return FakeService::logits(text_item("the game", "This is " + label + "."), 3);
  };
  // Without multi_label: softmax of the entailment logits (index 1) across labels.
  const float e0 = entail("sports")[1], e1 = entail("cooking")[1];
  const float m = std::max(e0, e1);
  const float p0 = std::exp(e0 - m) / (std::exp(e0 - m) + std::exp(e1 - m));
  auto r = post_json(server.port(), "/invocations",
                     R"({"inputs":"the game","parameters":{"candidate_labels":"sports, cooking",)"
                     R"("hypothesis_template":"This is {}."}})",
                     target("nli"));
  ASSERT_EQ(r.status, 200) << r.body;
  auto body = json::parse(r.body);
  EXPECT_EQ(body["sequence"], "the game");
  const int sports_at = body["labels"][0] == "sports" ? 0 : 1;
  EXPECT_NEAR(body["scores"][sports_at].get<float>(), p0, 1e-6);
  EXPECT_GE(body["scores"][0].get<float>(), body["scores"][1].get<float>());

  // multi_label: per label softmax over [contradiction (0), entailment (1)].
  r = post_json(server.port(), "/zero_shot",
                R"({"inputs":["the game"],"candidate_labels":["sports","cooking"],)"
                R"("hypothesis_template":"This is {}.","multi_label":true})",
                target("nli"));
  ASSERT_EQ(r.status, 200) << r.body;
  body = json::parse(r.body);
  ASSERT_TRUE(body.is_array());
  for (std::size_t i = 0; i < 2; ++i) {
    const auto l = entail(body[0]["labels"][i].get<std::string>());
    const float expected = 1.0f / (1.0f + std::exp(l[0] - l[1]));
    EXPECT_NEAR(body[0]["scores"][i].get<float>(), expected, 1e-6);
  }
  (void)labels;
}

TEST(Dialects, ToolkitFeatureExtractionIsTokenLevel) {
  InProcessServer server;
  auto r = post_json(server.port(), "/invocations", R"({"inputs":"a b c"})", target("embed"));
  ASSERT_EQ(r.status, 200) << r.body;
  auto body = json::parse(r.body);
  const auto item = text_item("a b c");
  ASSERT_EQ(body.size(), 1u);
  ASSERT_EQ(body[0].size(), static_cast<std::size_t>(FakeService::num_tokens(item)));
  ASSERT_EQ(body[0][1].size(), static_cast<std::size_t>(FakeService::kHidden));
  EXPECT_FLOAT_EQ(body[0][1][0].get<float>(), FakeService::pooled(item)[0] + 1.0f);
}

TEST(Dialects, TeiPredictRerankEmbedTokenize) {
  InProcessServer server;
  const auto port = server.port();
  // A top-level list of two strings is one pair.
  auto r = post_json(port, "/predict", R"({"inputs":["p","h"]})", target("nli"));
  ASSERT_EQ(r.status, 200) << r.body;
  auto body = json::parse(r.body);
  ASSERT_EQ(body.size(), 3u);
  const auto probs = api::softmax(FakeService::logits(text_item("p", "h"), 3));
  EXPECT_FLOAT_EQ(body[0]["score"].get<float>(), *std::max_element(probs.begin(), probs.end()));
  EXPECT_FALSE(r.header("x-compute-time").empty());
  EXPECT_FALSE(r.header("x-inference-time").empty());
  EXPECT_EQ(r.header("x-compute-tokens"),
            std::to_string(FakeService::num_tokens(text_item("p", "h"))));

  r = post_json(port, "/predict", R"({"inputs":[["a"],["p","h"],["b"]]})", target("nli"));
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(json::parse(r.body).size(), 3u);

  r = post_json(port, "/rerank", R"({"query":"q","texts":["d1","d2","d3"],"return_text":true})",
                target("rerank"));
  ASSERT_EQ(r.status, 200) << r.body;
  body = json::parse(r.body);
  ASSERT_EQ(body.size(), 3u);
  for (const auto& e : body) {
    const auto index = e["index"].get<int>();
    const std::string doc = "d" + std::to_string(index + 1);
    EXPECT_EQ(e["text"], doc);
    EXPECT_FLOAT_EQ(e["score"].get<float>(),
                    api::sigmoid(FakeService::logits(text_item("q", doc), 1)[0]));
  }
  EXPECT_GE(body[0]["score"].get<float>(), body[1]["score"].get<float>());

  r = post_json(port, "/embed", R"({"inputs":["a","b"]})", target("embed"));
  ASSERT_EQ(r.status, 200) << r.body;
  body = json::parse(r.body);
  ASSERT_EQ(body.size(), 2u);
  auto v = FakeService::pooled(text_item("b"));
  double norm = 0;
  for (float x : v) norm += x * x;
  EXPECT_NEAR(body[1][0].get<float>(), v[0] / std::sqrt(norm), 1e-6);

  r = post_json(port, "/embed", R"({"inputs":"a","normalize":false,"dimensions":2})",
                target("embed"));
  ASSERT_EQ(r.status, 200) << r.body;
  body = json::parse(r.body);
  ASSERT_EQ(body[0].size(), 2u);
  EXPECT_FLOAT_EQ(body[0][1].get<float>(), FakeService::pooled(text_item("a"))[1]);

  r = post_json(port, "/tokenize", R"({"inputs":"héllo world"})", target("nli"));
  ASSERT_EQ(r.status, 200) << r.body;
  body = json::parse(r.body);
  ASSERT_EQ(body[0].size(), 4u);
  EXPECT_TRUE(body[0][0]["special"].get<bool>());
  EXPECT_EQ(body[0][1]["text"], "héllo");
  EXPECT_EQ(body[0][1]["start"], 0);
  EXPECT_EQ(body[0][1]["stop"], 6);  // bytes: é is two
  EXPECT_EQ(body[0][2]["start"], 7);
}

TEST(Dialects, KserveTensorPaddingIsRemovedByTheMask) {
  InProcessServer server;
  runtime::InferenceItem a;
  a.pretokenized = true;
  a.input_ids = {12, 50, 13};
  a.token_type_ids = {0, 0, 0};
  runtime::InferenceItem b;
  b.pretokenized = true;
  b.input_ids = {12, 60, 61, 13};
  b.token_type_ids = {0, 0, 1, 1};
  const std::string body_text = R"({"id":"r1","inputs":[
    {"name":"input_ids","shape":[2,4],"datatype":"INT64","data":[12,50,13,0,12,60,61,13]},
    {"name":"attention_mask","shape":[2,4],"datatype":"INT64","data":[1,1,1,0,1,1,1,1]},
    {"name":"token_type_ids","shape":[2,4],"datatype":"INT64","data":[[0,0,0,0],[0,0,1,1]]}]})";
  auto r = post_json(server.port(), "/v2/models/nli/infer", body_text);
  ASSERT_EQ(r.status, 200) << r.body;
  auto body = json::parse(r.body);
  EXPECT_EQ(body["model_name"], "nli");
  EXPECT_EQ(body["id"], "r1");
  const auto& out = body["outputs"][0];
  EXPECT_EQ(out["name"], "logits");
  EXPECT_EQ(out["shape"], json::parse("[2,3]"));
  const auto la = FakeService::logits(a, 3), lb = FakeService::logits(b, 3);
  for (int j = 0; j < 3; ++j) {
    EXPECT_FLOAT_EQ(out["data"][j].get<float>(), la[j]);
    EXPECT_FLOAT_EQ(out["data"][3 + j].get<float>(), lb[j]);
  }
  r = post_json(server.port(), "/v2/models/embed/infer",
                R"({"inputs":[{"name":"text","shape":[1],"datatype":"BYTES","data":["hi"]}]})");
  ASSERT_EQ(r.status, 200) << r.body;
  body = json::parse(r.body);
  EXPECT_EQ(body["outputs"][0]["name"], "embeddings");
  EXPECT_FLOAT_EQ(body["outputs"][0]["data"][0].get<float>(),
                  FakeService::pooled(text_item("hi"))[0]);

  r = get(server.port(), "/v2/models/nli");
  ASSERT_EQ(r.status, 200);
  EXPECT_EQ(json::parse(r.body)["outputs"][0]["shape"], json::parse("[-1,3]"));
  r = get(server.port(), "/v2/models/nli/ready");
  EXPECT_EQ(json::parse(r.body)["ready"], true);
  EXPECT_EQ(get(server.port(), "/v2/health/ready").status, 200);
  EXPECT_EQ(get(server.port(), "/v2/health/live").status, 200);
}

TEST(Dialects, OpenAiFloatAndBase64AgreeAndAreNormalised) {
  InProcessServer server;
  server.service().only_models = {"embed"};
  auto r = post_json(server.port(), "/v1/embeddings",
                     R"({"input":["a", "b"],"model":"text-embedding-3-small"})");
  ASSERT_EQ(r.status, 200) << r.body;
  auto body = json::parse(r.body);
  EXPECT_EQ(body["object"], "list");
  EXPECT_EQ(body["model"], "embed");
  // A Hub id, which no registered name can equal, selects the one model too.
  const auto hub_id = post_json(server.port(), "/v1/embeddings",
                                R"({"input":"a","model":"BAAI/bge-small-en-v1.5"})");
  EXPECT_EQ(hub_id.status, 200) << hub_id.body;
  ASSERT_EQ(body["data"].size(), 2u);
  EXPECT_EQ(body["data"][1]["index"], 1);
  EXPECT_EQ(body["usage"]["prompt_tokens"], 6);
  std::vector<float> floats = body["data"][0]["embedding"].get<std::vector<float>>();
  double norm = 0;
  for (float x : floats) norm += x * x;
  EXPECT_NEAR(norm, 1.0, 1e-5);

  r = post_json(server.port(), "/v1/embeddings",
                R"({"input":"a","model":"embed","encoding_format":"base64"})");
  ASSERT_EQ(r.status, 200) << r.body;
  const std::string b64 = json::parse(r.body)["data"][0]["embedding"];
  // Decode and compare bit for bit.
  std::string bytes;
  int bits = 0, acc = 0;
  for (const char c : b64) {
    if (c == '=') break;
    const int v = c >= 'A' && c <= 'Z'   ? c - 'A'
                  : c >= 'a' && c <= 'z' ? c - 'a' + 26
                  : c >= '0' && c <= '9' ? c - '0' + 52
                  : c == '+'             ? 62
                                         : 63;
    acc = (acc << 6) | v;
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      bytes.push_back(static_cast<char>((acc >> bits) & 0xff));
    }
  }
  ASSERT_EQ(bytes.size(), floats.size() * 4);
  std::vector<float> decoded(floats.size());
  std::memcpy(decoded.data(), bytes.data(), bytes.size());
  EXPECT_EQ(decoded, floats);

  // Token arrays are served as ids.
  r = post_json(server.port(), "/v1/embeddings", R"({"input":[[12,7,13]],"model":"embed"})");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(json::parse(r.body)["usage"]["total_tokens"], 3);
}

TEST(Dialects, HealthInfoMetricsAndModelManagement) {
  api::ApiOptions options;
  options.enable_model_management = true;
  InProcessServer server(options);
  const auto port = server.port();
  EXPECT_EQ(get(port, "/ping").status, 200);
  EXPECT_EQ(get(port, "/health").status, 200);
  server.service().set_ready(false);
  auto r = get(port, "/ping");
  EXPECT_EQ(r.status, 503);
  EXPECT_EQ(r.body, R"({"error":"unhealthy","error_type":"Unhealthy"})");
  EXPECT_EQ(get(port, "/v2/health/ready").status, 400);
  EXPECT_EQ(get(port, "/v2/health/live").status, 200);
  server.service().set_ready(true);

  r = get(port, "/info", target("nli"));
  ASSERT_EQ(r.status, 200) << r.body;
  auto info = json::parse(r.body);
  EXPECT_EQ(info["model_id"], "nli");
  EXPECT_EQ(info["model_type"]["classifier"]["id2label"]["1"], "entailment");
  EXPECT_EQ(info["model_type"]["classifier"]["label2id"]["neutral"], 2);
  EXPECT_EQ(info["max_client_batch_size"], 32);
  // The precision it runs in and, under --precision auto, how it was chosen.
  EXPECT_EQ(info["model_dtype"], "int8");
  EXPECT_EQ(info["precision"]["served"], "int8");
  EXPECT_EQ(info["precision"]["asked"], "auto");
  EXPECT_EQ(info["precision"]["source"], "cache");
  EXPECT_EQ(info["precision"]["verdict"], "serving int8: int8 passed (104 inputs)");
  r = get(port, "/info", target("embed"));
  ASSERT_EQ(r.status, 200) << r.body;
  info = json::parse(r.body);
  EXPECT_EQ(info["model_dtype"], "float32");
  EXPECT_EQ(info["precision"], json({{"served", "fp32"}, {"asked", "fp32"}}));

  r = get(port, "/metrics");
  EXPECT_EQ(r.status, 200);
  EXPECT_NE(r.body.find("onepass_fake_requests_total"), std::string::npos);
  EXPECT_GT(server.service().recorded_requests(), 5u);

  r = get(port, "/models");
  ASSERT_EQ(r.status, 200);
  EXPECT_EQ(json::parse(r.body)["models"].size(), 3u);
  const std::string dir = std::string(ONEPASS_TEST_DATA_DIR) + "/fixtures/models/bert-tiny-nli";
  r = post_json(port, "/models", json{{"model_name", "extra"}, {"url", dir}}.dump());
  EXPECT_EQ(r.status, 200) << r.body;
  r = post_json(port, "/models", json{{"model_name", "extra"}, {"url", dir}}.dump());
  EXPECT_EQ(r.status, 409) << r.body;
  r = post_json(port, "/models",
                json{{"model_name", "x2"}, {"url", dir + "/../bert-tiny-nli"}}.dump());
  EXPECT_EQ(r.status, 400) << r.body;
  // A name the registry could never hold is the body's fault, with the rule in the message.
  for (const std::string& bad :
       std::vector<std::string>{"my model", "..", "a/b", std::string(129, 'a')}) {
    r = post_json(port, "/models", json{{"model_name", bad}, {"url", dir}}.dump());
    EXPECT_EQ(r.status, 400) << bad;
    EXPECT_NE(r.body.find("A-Z a-z 0-9"), std::string::npos) << r.body;
  }
  r = post_json(port, "/models/extra/invoke", R"({"inputs":"a"})");
  EXPECT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(get(port, "/models/extra").status, 200);
  EXPECT_EQ(http_request(port, "DELETE", "/models/extra", "", "").status, 200);
  EXPECT_EQ(http_request(port, "DELETE", "/models/extra", "", "").status, 404);
}

}  // namespace
}  // namespace onepass::testing
