// End to end: the rerank and classify routes RAG frameworks call (Cohere/Jina /v1|v2/rerank,
// vLLM /score and /classify) through the real `onepass serve` binary, against the fixtures'
// golden outputs (golden.json, from transformers 4.47.1): order, scores, top_n, echoed
// documents, vLLM's pairing rules and truncation, the answers' envelopes and the route labels in
// /metrics. The bad-input cases of these routes are in serve_catalogue_test.cpp.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>

#include "serve_suite.h"
#include "tests/support/golden_file.h"
#include "tests/support/http_client.h"
#include "tests/support/paths.h"
#include "tests/support/serve_process.h"

namespace onepass::testing {
namespace {

using nlohmann::json;

constexpr double kTolerance = 1e-4;

// Untruncated cases whose ids tokenizer.json reproduces (no fast_input_ids), with a non-empty
// query and passage when `non_empty` (Cohere refuses empty texts).
std::vector<json> pair_cases(const json& g, bool non_empty) {
  std::vector<json> out;
  for (const auto& c : g["cases"]) {
    if (c.contains("truncation") || c.contains("fast_input_ids")) continue;
    if (non_empty &&
        (c["pair"][0].get<std::string>().empty() || c["pair"][1].get<std::string>().empty()))
      continue;
    out.push_back(c);
  }
  return out;
}

const json& find_case(const json& g, const std::string& id) {
  for (const auto& c : g["cases"])
    if (c["id"] == id) return c;
  throw std::runtime_error("no golden case " + id);
}

class ServeRerankClassify : public ServeSuite<ServeRerankClassify> {
 public:
  static std::vector<std::string> server_args() {
    return {"--model", "nli=" + fixture_model("bert-tiny-nli"),
            "--model", "embed=" + fixture_model("bert-tiny-embed"),
            "--model", "rerank=" + fixture_model("bert-tiny-rerank")};
  }
};

// The golden cases that share the query "what is this text about": one rerank request whose
// documents are their passages.
struct OneQuery {
  std::string query;
  std::vector<std::string> documents;
  std::vector<double> probs;
};

OneQuery shared_query_cases(const json& g) {
  OneQuery q{"what is this text about", {}, {}};
  for (const auto& c : pair_cases(g, true)) {
    if (c["pair"][0] != q.query) continue;
    q.documents.push_back(c["pair"][1]);
    q.probs.push_back(c["probs"][0]);
  }
  return q;
}

TEST_F(ServeRerankClassify, CohereRerankV1AndV2OrderAndScoresMatchGoldens) {
  const auto g = read_golden("bert-tiny-rerank");
  const OneQuery q = shared_query_cases(g);
  ASSERT_GE(q.documents.size(), 10u);
  std::vector<std::size_t> order(q.documents.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return q.probs[a] > q.probs[b]; });
  for (const char* route : {"/v1/rerank", "/v2/rerank"}) {
    SCOPED_TRACE(route);
    json documents = json::array();
    for (std::size_t i = 0; i < q.documents.size(); ++i) {
      // v1 takes strings and {"text"} objects alike; the objects' other fields come back.
      if (i % 2 == 1)
        documents.push_back({{"text", q.documents[i]}, {"id", "doc" + std::to_string(i)}});
      else
        documents.push_back(q.documents[i]);
    }
    const auto r = post_json(port(), route,
                             json{{"model", "rerank"},
                                  {"query", q.query},
                                  {"documents", documents},
                                  {"top_n", 5},
                                  {"return_documents", true}}
                                 .dump());
    ASSERT_EQ(r.status, 200) << r.body;
    const auto answer = json::parse(r.body);
    EXPECT_EQ(answer["id"], r.header("x-request-id"));
    EXPECT_EQ(answer["meta"]["api_version"]["version"], route[2] == '1' ? "1" : "2");
    EXPECT_EQ(answer["model"], "rerank");
    EXPECT_GT(answer["usage"]["total_tokens"].get<int>(), 0);
    const auto& results = answer["results"];
    ASSERT_EQ(results.size(), 5u) << r.body;
    for (std::size_t rank = 0; rank < 5; ++rank) {
      const std::size_t index = order[rank];
      EXPECT_EQ(results[rank]["index"], index) << rank;
      EXPECT_NEAR(results[rank]["relevance_score"].get<double>(), q.probs[index], kTolerance);
      EXPECT_EQ(results[rank]["document"]["text"], q.documents[index]);
      if (index % 2 == 1) {
        EXPECT_EQ(results[rank]["document"]["id"], "doc" + std::to_string(index));
      }
    }
  }
  // Without top_n every document comes back; without return_documents, no document.
  const auto all =
      post_json(port(), "/v2/rerank",
                json{{"model", "rerank"}, {"query", q.query}, {"documents", q.documents}}.dump());
  ASSERT_EQ(all.status, 200) << all.body;
  const auto results = json::parse(all.body)["results"];
  ASSERT_EQ(results.size(), q.documents.size());
  for (std::size_t rank = 0; rank < results.size(); ++rank) {
    EXPECT_EQ(results[rank]["index"], order[rank]);
    EXPECT_FALSE(results[rank].contains("document"));
  }
}

TEST_F(ServeRerankClassify, CohereRerankEqualsTeiRerank) {
  const auto g = read_golden("bert-tiny-rerank");
  const auto& c = find_case(g, "relevant");
  const auto& d = find_case(g, "irrelevant");
  const std::vector<std::string> texts{c["pair"][1], d["pair"][1]};
  const auto tei = post_json(
      port(), "/rerank", json{{"query", c["pair"][0]}, {"texts", texts}}.dump(), target("rerank"));
  const auto cohere =
      post_json(port(), "/v1/rerank",
                json{{"model", "rerank"}, {"query", c["pair"][0]}, {"documents", texts}}.dump());
  ASSERT_EQ(tei.status, 200) << tei.body;
  ASSERT_EQ(cohere.status, 200) << cohere.body;
  const auto a = json::parse(tei.body);
  const auto b = json::parse(cohere.body)["results"];
  ASSERT_EQ(a.size(), 2u);
  for (std::size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(a[i]["index"], b[i]["index"]);
    EXPECT_EQ(a[i]["score"].get<float>(), b[i]["relevance_score"].get<float>());
  }
  EXPECT_NEAR(b[0]["relevance_score"].get<double>(), d["probs"][0].get<double>(), kTolerance);
}

// max_chunks_per_doc: a document over the model's 512 tokens is cut into windows of the
// documented rule (docs/api.md "Long inputs": the query whole in each, 506 document tokens a
// window, 63 shared, so windows start at tokens 0, 443 and 886 of 1200), at most N of them, and
// scored by its best window. Each expected window score is the same server's answer for that
// window's words sent as a short document of their own: every word here is one token.
TEST_F(ServeRerankClassify, CohereMaxChunksPerDocScoresTheBestOfTheFirstNWindows) {
  const std::vector<std::string> vocabulary = {
      "the",  "and",  "for",  "this",  "with",     "that",   "not",   "you",
      "test", "copy", "type", "boost", "function", "thread", "graph", "build"};
  std::vector<std::string> words;
  for (std::size_t i = 0; i < 1200; ++i)
    words.push_back(vocabulary[(i * 7 + i / 97) % vocabulary.size()]);
  // Towards the end the document talks about the query's words: its last window is the best.
  for (std::size_t i = 1000; i < 1200; i += 3) words[i] = i % 2 ? "graph" : "boost";
  const auto join = [&](std::size_t begin, std::size_t end) {
    std::string text;
    for (std::size_t i = begin; i < std::min(end, words.size()); ++i)
      text += (text.empty() ? "" : " ") + words[i];
    return text;
  };
  const std::string query = "boost graph example";
  const std::string document = join(0, words.size());
  const auto tokens =
      post_json(port(), "/tokenize",
                json{{"inputs", document}, {"add_special_tokens", false}}.dump(), target("rerank"));
  ASSERT_EQ(tokens.status, 200) << tokens.body;
  ASSERT_EQ(json::parse(tokens.body)[0].size(), words.size()) << "a word is not one token";
  const auto query_tokens =
      post_json(port(), "/tokenize", json{{"inputs", query}, {"add_special_tokens", false}}.dump(),
                target("rerank"));
  ASSERT_EQ(json::parse(query_tokens.body)[0].size(), 3u);

  const auto rerank = [&](const std::string& doc, std::optional<int> max_chunks) {
    json body = {{"model", "rerank"}, {"query", query}, {"documents", {doc}}};
    if (max_chunks) body["max_chunks_per_doc"] = *max_chunks;
    const auto r = post_json(port(), "/v1/rerank", body.dump());
    EXPECT_EQ(r.status, 200) << r.body;
    return json::parse(r.body);
  };
  const auto score_of = [](const json& answer) {
    return answer["results"][0]["relevance_score"].get<double>();
  };
  std::vector<double> window_scores;
  for (const std::size_t begin : {0u, 443u, 886u})
    window_scores.push_back(score_of(rerank(join(begin, begin + 506), std::nullopt)));
  ASSERT_GT(window_scores[2], window_scores[0]);
  ASSERT_GT(window_scores[2], window_scores[1]);

  const auto three = rerank(document, 10);
  EXPECT_NEAR(score_of(three), window_scores[2], 1e-5);
  // Every window's tokens are counted: 512 + 512 + (6 + 314).
  EXPECT_EQ(three["usage"]["total_tokens"], 1344);
  EXPECT_NEAR(score_of(rerank(document, 2)), std::max(window_scores[0], window_scores[1]), 1e-5);
  // One window is the first 506 tokens: what truncation without the field gives.
  const auto one = rerank(document, 1);
  EXPECT_NEAR(score_of(one), window_scores[0], 1e-5);
  EXPECT_EQ(score_of(one), score_of(rerank(document, std::nullopt)));
  EXPECT_EQ(one["usage"]["total_tokens"], 512);
  // v2 reads the field the same way, and a short document is one window whatever N is.
  const auto v2 = post_json(port(), "/v2/rerank",
                            json{{"model", "rerank"},
                                 {"query", query},
                                 {"documents", {document, "boost graph"}},
                                 {"max_chunks_per_doc", 3}}
                                .dump());
  ASSERT_EQ(v2.status, 200) << v2.body;
  const auto results = json::parse(v2.body)["results"];
  for (const auto& result : results) {
    const double expected =
        result["index"] == 0 ? window_scores[2] : score_of(rerank("boost graph", std::nullopt));
    EXPECT_NEAR(result["relevance_score"].get<double>(), expected, 1e-5);
  }
}

TEST_F(ServeRerankClassify, VllmScorePairsOneToNAndNToNAsGoldens) {
  const auto g = read_golden("bert-tiny-rerank");
  // N:N over every reproducible case, empty query and passage included (vLLM scores them).
  const auto cases = pair_cases(g, false);
  json first = json::array(), second = json::array();
  for (const auto& c : cases) {
    first.push_back(c["pair"][0]);
    second.push_back(c["pair"][1]);
  }
  ASSERT_LE(cases.size(), 32u);
  auto r = post_json(port(), "/score",
                     json{{"model", "rerank"}, {"text_1", first}, {"text_2", second}}.dump());
  ASSERT_EQ(r.status, 200) << r.body;
  auto answer = json::parse(r.body);
  EXPECT_EQ(answer["object"], "list");
  EXPECT_EQ(answer["model"], "rerank");
  EXPECT_EQ(answer["id"], "score-" + r.header("x-request-id"));
  EXPECT_TRUE(answer["created"].is_number_integer());
  EXPECT_EQ(answer["usage"]["completion_tokens"], 0);
  int tokens = 0;
  ASSERT_EQ(answer["data"].size(), cases.size());
  for (std::size_t i = 0; i < cases.size(); ++i) {
    SCOPED_TRACE(cases[i]["id"].get<std::string>());
    EXPECT_EQ(answer["data"][i]["index"], i);
    EXPECT_EQ(answer["data"][i]["object"], "score");
    EXPECT_NEAR(answer["data"][i]["score"].get<double>(), cases[i]["probs"][0].get<double>(),
                kTolerance);
    tokens += cases[i]["num_tokens"].get<int>();
  }
  EXPECT_EQ(answer["usage"]["prompt_tokens"], tokens);
  EXPECT_EQ(answer["usage"]["total_tokens"], tokens);

  // 1:N with a string text_1 on /v1/score, raw logits with use_activation false.
  const OneQuery q = shared_query_cases(g);
  r = post_json(port(), "/v1/score",
                json{{"text_1", q.query},
                     {"text_2", q.documents},
                     {"model", "rerank"},
                     {"use_activation", false}}
                    .dump());
  ASSERT_EQ(r.status, 200) << r.body;
  answer = json::parse(r.body);
  ASSERT_EQ(answer["data"].size(), q.documents.size());
  for (std::size_t i = 0; i < q.documents.size(); ++i) {
    const double logit = answer["data"][i]["score"].get<double>();
    EXPECT_NEAR(1.0 / (1.0 + std::exp(-logit)), q.probs[i], kTolerance) << i;
  }
}

TEST_F(ServeRerankClassify, VllmTruncatePromptTokensIsLongestFirstAtThatLength) {
  const auto g = read_golden("bert-tiny-rerank");
  const auto& c = find_case(g, "trunc_64");
  ASSERT_EQ(c["max_length"], 64);
  ASSERT_EQ(c["truncation"], "longest_first");
  const auto r = post_json(port(), "/score",
                           json{{"model", "rerank"},
                                {"text_1", c["pair"][0]},
                                {"text_2", c["pair"][1]},
                                {"truncate_prompt_tokens", 64}}
                               .dump());
  ASSERT_EQ(r.status, 200) << r.body;
  const auto answer = json::parse(r.body);
  EXPECT_NEAR(answer["data"][0]["score"].get<double>(), c["probs"][0].get<double>(), kTolerance);
  EXPECT_EQ(answer["usage"]["prompt_tokens"], 64);
  // Without it, the same pair is too long for nothing: 400 in vLLM's error shape.
  const auto& long_case = find_case(g, "long_300");
  const auto passage = long_case["pair"][1].get<std::string>();
  const std::string text = passage + " " + passage;  // over 600 tokens
  const auto refused = post_json(
      port(), "/score", json{{"model", "rerank"}, {"text_1", "q"}, {"text_2", text}}.dump());
  EXPECT_EQ(refused.status, 400) << refused.body;
  const auto error = json::parse(refused.body)["error"];
  EXPECT_EQ(error["code"], 400);
  EXPECT_EQ(error["type"], "BadRequestError");
}

TEST_F(ServeRerankClassify, VllmClassifyProbsAndLabelsMatchGoldens) {
  const auto g = read_golden("bert-tiny-nli");
  std::vector<json> cases;
  for (const auto& c : g["cases"]) {
    if (c.contains("pair") || c.contains("truncation") || c.contains("fast_input_ids")) continue;
    cases.push_back(c);
  }
  ASSERT_GE(cases.size(), 10u);
  if (cases.size() > 32) cases.resize(32);
  json input = json::array();
  for (const auto& c : cases) input.push_back(c["text"]);
  const auto r = post_json(port(), "/classify", json{{"model", "nli"}, {"input", input}}.dump());
  ASSERT_EQ(r.status, 200) << r.body;
  const auto answer = json::parse(r.body);
  EXPECT_EQ(answer["id"], "classify-" + r.header("x-request-id"));
  EXPECT_EQ(answer["object"], "list");
  EXPECT_EQ(answer["model"], "nli");
  ASSERT_EQ(answer["data"].size(), cases.size());
  int tokens = 0;
  for (std::size_t i = 0; i < cases.size(); ++i) {
    SCOPED_TRACE(cases[i]["id"].get<std::string>());
    const auto& item = answer["data"][i];
    EXPECT_EQ(item["index"], i);
    EXPECT_EQ(item["num_classes"], 3);
    EXPECT_EQ(item["label"], cases[i]["label"]);
    ASSERT_EQ(item["probs"].size(), 3u);
    for (std::size_t k = 0; k < 3; ++k)
      EXPECT_NEAR(item["probs"][k].get<double>(), cases[i]["probs"][k].get<double>(), kTolerance);
    tokens += cases[i]["num_tokens"].get<int>();
  }
  EXPECT_EQ(answer["usage"]["prompt_tokens"], tokens);
  // One string is one input; the one-label reranker answers its sigmoid.
  const auto rerank_golden = read_golden("bert-tiny-rerank");
  const auto& relevant = find_case(rerank_golden, "relevant");
  const auto one = post_json(port(), "/classify", json{{"model", "rerank"}, {"input", "a"}}.dump());
  ASSERT_EQ(one.status, 200) << one.body;
  EXPECT_EQ(json::parse(one.body)["data"][0]["num_classes"], 1);
  EXPECT_EQ(json::parse(one.body)["data"][0]["label"], relevant["label"]);
}

TEST_F(ServeRerankClassify, RoutesAreLabelledInMetrics) {
  for (const char* route : {"/v1/rerank", "/v2/rerank"})
    ASSERT_EQ(post_json(port(), route,
                        json{{"model", "rerank"}, {"query", "q"}, {"documents", {"a"}}}.dump())
                  .status,
              200);
  ASSERT_EQ(post_json(port(), "/score",
                      json{{"model", "rerank"}, {"text_1", "q"}, {"text_2", "a"}}.dump())
                .status,
            200);
  ASSERT_EQ(post_json(port(), "/v1/score",
                      json{{"model", "rerank"}, {"text_1", "q"}, {"text_2", "a"}}.dump())
                .status,
            200);
  ASSERT_EQ(post_json(port(), "/classify", json{{"model", "nli"}, {"input", "a"}}.dump()).status,
            200);
  ASSERT_EQ(post_json(port(), "/classify", json{{"model", "embed"}, {"input", "a"}}.dump()).status,
            400);
  const auto metrics = get(port(), "/metrics").body;
  for (const std::string line :
       {R"(onepass_requests_total{route="/v1/rerank",model="rerank",status="200"})",
        R"(onepass_requests_total{route="/v2/rerank",model="rerank",status="200"})",
        R"(onepass_requests_total{route="/score",model="rerank",status="200"})",
        R"(onepass_requests_total{route="/v1/score",model="rerank",status="200"})",
        R"(onepass_requests_total{route="/classify",model="nli",status="200"})",
        R"(onepass_requests_total{route="/classify",model="embed",status="400"})",
        R"(onepass_http_request_duration_seconds_count{route="/v1/rerank"})"})
    EXPECT_NE(metrics.find(line), std::string::npos) << line;
}

}  // namespace
}  // namespace onepass::testing
