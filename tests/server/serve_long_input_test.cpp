// End to end through the `onepass serve` binary: long documents (docs/api.md "Long inputs").
// A document of more than 5,000 tokens, built from the fixtures' golden texts, is classified,
// embedded and zero-shot classified with "long_input": "chunk"; each answer must equal the
// documented combination of the windows, where the windows are cut here from the server's
// /tokenize ids by the documented rule and each is run as its own short KServe request (the
// route serve_goldens_test holds to the Hugging Face goldens). Also: the default refusal, the
// window limit, and a short request answered while the document's windows run.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <fstream>
#include <future>
#include <memory>
#include <nlohmann/json.hpp>
#include <thread>

#include "held_model.h"
#include "metrics_scrape.h"
#include "serve_suite.h"
#include "tests/runtime/window_oracle.h"
#include "tests/support/http_client.h"
#include "tests/support/paths.h"
#include "tests/support/serve_process.h"

namespace onepass::testing {
namespace {

using nlohmann::json;

constexpr std::size_t kLimit = 512;  // the fixtures' max_position_embeddings

// Token ids of `text` from the server's tokenizer for `model`.
std::vector<int> token_ids(std::uint16_t port, const std::string& model, const std::string& text,
                           bool special) {
  const auto r =
      post_json(port, "/tokenize", json{{"inputs", text}, {"add_special_tokens", special}}.dump(),
                target(model));
  EXPECT_EQ(r.status, 200) << r.body;
  const json answer = json::parse(r.body);
  std::vector<int> ids;
  for (const auto& token : answer.at(0)) ids.push_back(token.at("id").get<int>());
  return ids;
}

// The golden texts of bert-tiny-nli, joined until the document has at least `tokens` tokens.
std::string long_document(std::uint16_t port, std::size_t tokens) {
  std::ifstream in(fixture_model("bert-tiny-nli") + "/golden.json");
  const json g = json::parse(in);
  std::vector<std::string> texts;
  for (const auto& c : g["cases"])
    if (c.contains("text") && c["text"].get<std::string>().size() > 20) texts.push_back(c["text"]);
  std::string doc;
  std::size_t next = 0;
  do {
    for (std::size_t k = 0; k < 20; ++k, ++next) {
      if (!doc.empty()) doc += ' ';
      doc += texts[next % texts.size()];
    }
  } while (token_ids(port, "nli", doc, false).size() < tokens);
  return doc;
}

// The documented windows: runs of `room` tokens of the first text, each starting
// `room - stride` after the previous, the last ending with the text.
std::vector<std::vector<int>> spans(const std::vector<int>& content, std::size_t room,
                                    std::size_t stride) {
  std::vector<std::vector<int>> out;
  for (std::size_t begin = 0;; begin += room - stride) {
    const std::size_t end = std::min(begin + room, content.size());
    out.emplace_back(content.begin() + begin, content.begin() + end);
    if (end == content.size()) break;
  }
  return out;
}

// One window as its own KServe request: [CLS] run [SEP] (second [SEP]-terminated with type 1).
std::vector<float> run_window(std::uint16_t port, const std::string& model, int cls, int sep,
                              const std::vector<int>& run, const std::vector<int>& second = {}) {
  std::vector<int> ids{cls}, types{0};
  for (int id : run) ids.push_back(id), types.push_back(0);
  ids.push_back(sep), types.push_back(0);
  if (!second.empty()) {
    for (int id : second) ids.push_back(id), types.push_back(1);
    ids.push_back(sep), types.push_back(1);
  }
  const json shape = {1, ids.size()};
  const json body = {
      {"inputs",
       {{{"name", "input_ids"}, {"shape", shape}, {"datatype", "INT64"}, {"data", ids}},
        {{"name", "token_type_ids"}, {"shape", shape}, {"datatype", "INT64"}, {"data", types}}}}};
  const auto r = post_json(port, "/v2/models/" + model + "/infer", body.dump());
  EXPECT_EQ(r.status, 200) << r.body;
  return json::parse(r.body)["outputs"][0]["data"].get<std::vector<float>>();
}

// Polls a gauge until it reads `value`; false after 60 s (a broken server, not a slow one).
bool wait_gauge(std::uint16_t port, const std::string& name, double value) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (std::chrono::steady_clock::now() < deadline) {
    if (metric_sum(get(port, "/metrics").body, name) == value) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return false;
}

class ServeLongInput : public ServeSuite<ServeLongInput> {
 public:
  static std::vector<std::string> server_args() {
    return {"--model", "nli=" + fixture_model("bert-tiny-nli"), "--model",
            "embed=" + fixture_model("bert-tiny-embed")};
  }

 protected:
  static void SetUpTestSuite() {
    ServeSuite::SetUpTestSuite();
    if (ready()) document_ = std::make_unique<std::string>(long_document(port(), 5000));
  }
  static void TearDownTestSuite() {
    document_.reset();
    ServeSuite::TearDownTestSuite();
  }
  const std::string& document() const { return *document_; }

 private:
  static inline std::unique_ptr<std::string> document_;
};

TEST_F(ServeLongInput, ADocumentOverTheLimitIsRefusedByDefault) {
  const auto r = post_json(port(), "/predict", json{{"inputs", document()}}.dump(), target("nli"));
  EXPECT_EQ(r.status, 422) << r.body;
  EXPECT_NE(json::parse(r.body)["error"].get<std::string>().find("512"), std::string::npos);
  const auto toolkit =
      post_json(port(), "/invocations", json{{"inputs", document()}}.dump(), target("nli"));
  EXPECT_EQ(toolkit.status, 422) << toolkit.body;
  // A bad policy is a validation error in the dialect's shape.
  const auto bad =
      post_json(port(), "/predict", json{{"inputs", document()}, {"long_input", "split"}}.dump(),
                target("nli"));
  EXPECT_EQ(bad.status, 422) << bad.body;
  EXPECT_EQ(json::parse(bad.body)["error_type"], "Validation");
  // Chunking and truncation asked for together contradict each other.
  const auto both = post_json(
      port(), "/invocations",
      json{{"inputs", document()}, {"parameters", {{"long_input", "chunk"}, {"truncation", true}}}}
          .dump(),
      target("nli"));
  EXPECT_EQ(both.status, 400) << both.body;
}

TEST_F(ServeLongInput, AFiveThousandTokenDocumentIsClassifiedAsTheWeightedMeanOfItsWindows) {
  const auto content = token_ids(port(), "nli", document(), false);
  ASSERT_GE(content.size(), 5000u);
  const auto framed = token_ids(port(), "nli", "a", true);
  const int cls = framed.front(), sep = framed.back();
  const std::size_t room = kLimit - 2;
  const auto runs = spans(content, room, room / 8);
  ASSERT_GE(runs.size(), 10u);
  std::vector<std::vector<float>> logits;
  std::vector<std::size_t> tokens;
  for (const auto& run : runs) {
    logits.push_back(run_window(port(), "nli", cls, sep, run));
    tokens.push_back(run.size() + 2);
  }
  const auto expected = token_weighted_mean(logits, tokens);

  const auto r =
      post_json(port(), "/predict",
                json{{"inputs", document()}, {"long_input", "chunk"}, {"raw_scores", true}}.dump(),
                target("nli"));
  ASSERT_EQ(r.status, 200) << r.body;
  const json answer = json::parse(r.body);
  ASSERT_EQ(answer.size(), 3u);
  const std::vector<std::string> labels = {"contradiction", "entailment", "neutral"};
  for (const auto& entry : answer) {
    const auto index = std::find(labels.begin(), labels.end(), entry["label"]) - labels.begin();
    EXPECT_NEAR(entry["score"].get<double>(), expected[index], 1e-4) << entry["label"];
  }
  // x-compute-tokens counts every window's tokens.
  std::size_t total = 0;
  for (auto t : tokens) total += t;
  EXPECT_EQ(r.header("x-compute-tokens"), std::to_string(total));

  // The toolkit route, with its own stride: the same rule over other windows.
  const auto runs64 = spans(content, room, 64);
  logits.clear();
  tokens.clear();
  for (const auto& run : runs64) {
    logits.push_back(run_window(port(), "nli", cls, sep, run));
    tokens.push_back(run.size() + 2);
  }
  const auto expected64 = token_weighted_mean(logits, tokens);
  const auto toolkit = post_json(port(), "/invocations",
                                 json{{"inputs", document()},
                                      {"parameters",
                                       {{"long_input", "chunk"},
                                        {"stride", 64},
                                        {"top_k", nullptr},
                                        {"function_to_apply", "none"}}}}
                                     .dump(),
                                 target("nli"));
  ASSERT_EQ(toolkit.status, 200) << toolkit.body;
  for (const auto& entry : json::parse(toolkit.body)) {
    const auto index = std::find(labels.begin(), labels.end(), entry["label"]) - labels.begin();
    EXPECT_NEAR(entry["score"].get<double>(), expected64[index], 1e-4) << entry["label"];
  }
}

TEST_F(ServeLongInput, WindowsCountAgainstTheClientBatchLimit) {
  // max_length 64 cuts the document into far more than --max-client-batch-size (32) windows.
  const auto r = post_json(
      port(), "/invocations",
      json{{"inputs", document()}, {"parameters", {{"long_input", "chunk"}, {"max_length", 64}}}}
          .dump(),
      target("nli"));
  EXPECT_EQ(r.status, 422) << r.body;
  const std::string message = json::parse(r.body)["message"];
  EXPECT_NE(message.find("windows, more than the 32 allowed"), std::string::npos) << message;
  // A stride as long as the window is refused too.
  const auto stride = post_json(
      port(), "/predict",
      json{{"inputs", document()}, {"long_input", "chunk"}, {"stride", 510}}.dump(), target("nli"));
  EXPECT_EQ(stride.status, 422) << stride.body;
  // The server is fine afterwards.
  EXPECT_EQ(
      post_json(port(), "/predict", json{{"inputs", "A short text."}}.dump(), target("nli")).status,
      200);
}

TEST_F(ServeLongInput, EmbeddingsAreTheTokenWeightedMeanOfTheWindowsThenNormalised) {
  const auto content = token_ids(port(), "embed", document(), false);
  const auto framed = token_ids(port(), "embed", "a", true);
  const std::size_t room = kLimit - 2;
  std::vector<std::vector<float>> pooled;
  std::vector<std::size_t> tokens;
  for (const auto& run : spans(content, room, room / 8)) {
    pooled.push_back(run_window(port(), "embed", framed.front(), framed.back(), run));
    tokens.push_back(run.size() + 2);
  }
  const auto expected = token_weighted_mean(pooled, tokens);

  auto r =
      post_json(port(), "/embed",
                json{{"inputs", document()}, {"long_input", "chunk"}, {"normalize", false}}.dump(),
                target("embed"));
  ASSERT_EQ(r.status, 200) << r.body;
  const auto raw = json::parse(r.body)[0].get<std::vector<float>>();
  ASSERT_EQ(raw.size(), expected.size());
  for (std::size_t h = 0; h < raw.size(); ++h) EXPECT_NEAR(raw[h], expected[h], 1e-4);

  r = post_json(port(), "/embed", json{{"inputs", document()}, {"long_input", "chunk"}}.dump(),
                target("embed"));
  ASSERT_EQ(r.status, 200) << r.body;
  const auto unit = json::parse(r.body)[0].get<std::vector<float>>();
  double norm = 0;
  for (float v : expected) norm += double(v) * v;
  norm = std::sqrt(norm);
  for (std::size_t h = 0; h < unit.size(); ++h) EXPECT_NEAR(unit[h], expected[h] / norm, 1e-5);
}

TEST_F(ServeLongInput, ZeroShotScoresEachLabelOnItsBestWindow) {
  const std::vector<std::string> labels = {"music", "sports"};
  const std::string hypothesis_template = "This example is {}.";
  const auto content = token_ids(port(), "nli", document(), false);
  const auto framed = token_ids(port(), "nli", "a", true);
  // bert-tiny-nli: contradiction 0, entailment 1.
  std::vector<float> best_entail;
  for (const auto& label : labels) {
    std::string hypothesis = hypothesis_template;
    hypothesis.replace(hypothesis.find("{}"), 2, label);
    const auto second = token_ids(port(), "nli", hypothesis, false);
    const std::size_t room = kLimit - 3 - second.size();
    float best = -INFINITY;
    for (const auto& run : spans(content, room, room / 8))
      best =
          std::max(best, run_window(port(), "nli", framed.front(), framed.back(), run, second)[1]);
    best_entail.push_back(best);
  }
  // Softmax of the best entailment logits across the labels (multi_label false).
  const double m = std::max(best_entail[0], best_entail[1]);
  const double e0 = std::exp(best_entail[0] - m), e1 = std::exp(best_entail[1] - m);
  const std::map<std::string, double> expected = {{"music", e0 / (e0 + e1)},
                                                  {"sports", e1 / (e0 + e1)}};

  const auto r = post_json(port(), "/zero_shot",
                           json{{"inputs", document()},
                                {"candidate_labels", labels},
                                {"hypothesis_template", hypothesis_template},
                                {"long_input", "chunk"}}
                               .dump(),
                           target("nli"));
  ASSERT_EQ(r.status, 200) << r.body;
  const json answer = json::parse(r.body);
  ASSERT_EQ(answer["labels"].size(), 2u);
  for (std::size_t i = 0; i < 2; ++i)
    EXPECT_NEAR(answer["scores"][i].get<double>(), expected.at(answer["labels"][i]), 1e-4);

  // Without chunking, zero-shot truncates the premise as the pipeline does: another answer.
  const auto truncated = post_json(port(), "/zero_shot",
                                   json{{"inputs", document()},
                                        {"candidate_labels", labels},
                                        {"hypothesis_template", hypothesis_template}}
                                       .dump(),
                                   target("nli"));
  ASSERT_EQ(truncated.status, 200) << truncated.body;
}

// With --long-input chunk the server chunks requests that do not ask, and a short request sent
// while a long document waits for its model is answered before the document: it is batched
// between the document's windows, not behind all of them. No timing decides: the model is lazy
// and held (HeldModel) until both requests are in flight.
TEST(ServeLongInputPolicy, ServerDefaultChunksAndShortRequestsPassTheDocument) {
  HeldModel held(fixture_model("bert-tiny-nli"));
  held.allow(1);  // registration reads config.json once, before "listening"
  ServeProcess server({"--model", "nli=" + held.dir(), "--lazy", "--long-input", "chunk",
                       "--max-batch-tokens", "1024"},
                      held.env());
  const auto port = server.port();
  // Built without the model's tokenizer (the model is held): the golden sentence is 21 tokens
  // for this vocabulary, so 250 of them are 5,250.
  std::string document;
  for (int i = 0; i < 250; ++i) document += "A man is playing a guitar on a busy street corner. ";

  std::atomic<int> order{0};
  int document_at = -1, short_at = -1;
  auto long_request = std::async(std::launch::async, [&] {
    auto r = post_json(port, "/predict", json{{"inputs", document}}.dump());
    document_at = order++;
    return r;
  });
  ASSERT_TRUE(wait_gauge(port, "onepass_inflight_requests", 1));
  auto short_request = std::async(std::launch::async, [&] {
    auto r = post_json(port, "/predict", json{{"inputs", "A short text."}}.dump());
    short_at = order++;
    return r;
  });
  ASSERT_TRUE(wait_gauge(port, "onepass_inflight_requests", 2));
  held.allow(1);  // the load
  const auto document_result = long_request.get();
  const auto short_result = short_request.get();
  ASSERT_EQ(document_result.status, 200) << document_result.body;
  ASSERT_EQ(short_result.status, 200) << short_result.body;
  EXPECT_GT(std::stoul(document_result.header("x-compute-tokens")), 5000u);
  EXPECT_EQ(short_at, 0);
  EXPECT_EQ(document_at, 1);
}

}  // namespace
}  // namespace onepass::testing
