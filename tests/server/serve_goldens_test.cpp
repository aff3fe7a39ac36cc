// End to end: the real `onepass serve` binary co-hosting seven fixture models, each dialect
// checked against the fixtures' golden outputs (golden.json, from transformers 4.47.1).
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>

#include "serve_suite.h"
#include "tests/support/golden_file.h"
#include "tests/support/http_client.h"
#include "tests/support/paths.h"
#include "tests/support/serve_process.h"
#include "tests/support/vector_compare.h"

namespace onepass::testing {
namespace {

using nlohmann::json;

// Cases the server can reproduce from text: not truncated, same ids from tokenizer.json as
// from the slow tokenizer.
std::vector<json> text_cases(const json& g, std::size_t limit) {
  std::vector<json> out;
  for (const auto& c : g["cases"]) {
    if (c.contains("truncation") || c.contains("fast_input_ids")) continue;
    out.push_back(c);
    if (out.size() == limit) break;
  }
  return out;
}

json text_input(const json& c) {
  if (c.contains("pair")) return json{{"text", c["pair"][0]}, {"text_pair", c["pair"][1]}};
  return c["text"];
}

// The classifiers server_args() serves (name, fixture folder): a sample of families end to end;
// model_test, runtime_golden_test and run_cli_test run every classifier fixture.
const std::vector<std::pair<std::string, std::string>> kServedClassifiers = {
    {"nli", "bert-tiny-nli"},
    {"xnli", "xlmr-tiny-nli"},
    {"dnli", "deberta-v2-tiny-nli"},
    {"mnli", "mpnet-tiny-nli"}};

class ServeGoldens : public ServeSuite<ServeGoldens> {
 public:
  static std::vector<std::string> server_args() {
    return {"--model", "nli=" + fixture_model("bert-tiny-nli"),
            "--model", "xnli=" + fixture_model("xlmr-tiny-nli"),
            "--model", "dnli=" + fixture_model("deberta-v2-tiny-nli"),
            "--model", "embed=" + fixture_model("bert-tiny-embed"),
            "--model", "rerank=" + fixture_model("bert-tiny-rerank"),
            "--model", "mnli=" + fixture_model("mpnet-tiny-nli"),
            "--model", "membed=" + fixture_model("mpnet-tiny-embed"),
            "--model", "nembed=" + fixture_model("nomic-bert-tiny-embed"),
            "--model", "gembed=" + fixture_model("gte-tiny-embed"),
            "--model", "grerank=" + fixture_model("gte-tiny-rerank")};
  }
};

TEST_F(ServeGoldens, ToolkitLogitsOfEveryClassifier) {
  for (const auto& [name, folder] : kServedClassifiers) {
    const auto g = read_golden(folder);
    const auto cases = text_cases(g, 32);
    json inputs = json::array();
    for (const auto& c : cases) inputs.push_back(text_input(c));
    // Strings and pair objects cannot share one list in the toolkit; send them one by one.
    for (std::size_t i = 0; i < cases.size(); ++i) {
      SCOPED_TRACE(name + " " + cases[i]["id"].get<std::string>());
      const json body = {{"inputs", inputs[i]},
                         {"parameters", {{"top_k", nullptr}, {"function_to_apply", "none"}}}};
      const auto r = post_json(port(), "/invocations", body.dump(), target(name));
      ASSERT_EQ(r.status, 200) << r.body;
      const auto answer = json::parse(r.body);
      const auto& logits = cases[i]["logits"];
      for (const auto& entry : answer) {
        const std::string label = entry["label"];
        int index = -1;
        for (const auto& [id, l] : g["id2label"].items())
          if (l == label) index = std::stoi(id);
        ASSERT_GE(index, 0);
        EXPECT_NEAR(entry["score"].get<double>(), logits[index].get<double>(), 1e-4);
      }
      EXPECT_EQ(answer[0]["label"], cases[i]["label"]);
    }
  }
}

TEST_F(ServeGoldens, TeiPredictBatchProbabilities) {
  const auto g = read_golden("bert-tiny-nli");
  const auto cases = text_cases(g, 16);
  json inputs = json::array();
  for (const auto& c : cases) {
    if (c.contains("pair")) {
      inputs.push_back(c["pair"]);
    } else if (!c["text"].get<std::string>().empty()) {
      inputs.push_back(json::array({c["text"]}));
    }
  }
  const auto r = post_json(port(), "/predict", json{{"inputs", inputs}}.dump(), target("nli"));
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_FALSE(r.header("x-inference-time").empty());
  const auto answer = json::parse(r.body);
  std::size_t k = 0;
  for (const auto& c : cases) {
    if (!c.contains("pair") && c["text"].get<std::string>().empty()) continue;
    const auto& scores = answer[k++];
    EXPECT_EQ(scores[0]["label"], c["label"]);
    for (const auto& entry : scores) {
      for (const auto& [id, l] : g["id2label"].items()) {
        if (l == entry["label"]) {
          EXPECT_NEAR(entry["score"].get<double>(), c["probs"][std::stoi(id)].get<double>(), 1e-5);
        }
      }
    }
  }
}

TEST_F(ServeGoldens, KserveTensorsWithPaddingGiveGoldenLogits) {
  for (const auto& [name, folder] : kServedClassifiers) {
    const auto g = read_golden(folder);
    // Every case, truncated ones included: the ids are given, the tokenizer is not involved.
    std::vector<json> cases;
    for (const auto& c : g["cases"]) {
      if (c["num_tokens"].get<int>() <= 80) cases.push_back(c);
      if (cases.size() == 6) break;
    }
    std::size_t width = 0;
    for (const auto& c : cases) width = std::max(width, c["input_ids"].size());
    json ids = json::array(), mask = json::array(), types = json::array();
    for (const auto& c : cases) {
      for (std::size_t t = 0; t < width; ++t) {
        const bool real = t < c["input_ids"].size();
        ids.push_back(real ? c["input_ids"][t].get<int>() : 0);
        mask.push_back(real ? 1 : 0);
        types.push_back(real && c.contains("token_type_ids") ? c["token_type_ids"][t].get<int>()
                                                             : 0);
      }
    }
    const json shape = {cases.size(), width};
    json body = {
        {"inputs",
         {{{"name", "input_ids"}, {"shape", shape}, {"datatype", "INT64"}, {"data", ids}},
          {{"name", "attention_mask"}, {"shape", shape}, {"datatype", "INT64"}, {"data", mask}},
          {{"name", "token_type_ids"}, {"shape", shape}, {"datatype", "INT64"}, {"data", types}}}}};
    const auto r = post_json(port(), "/v2/models/" + name + "/infer", body.dump());
    ASSERT_EQ(r.status, 200) << r.body;
    const auto out = json::parse(r.body)["outputs"][0];
    ASSERT_EQ(out["shape"], json::array({cases.size(), 3}));
    for (std::size_t i = 0; i < cases.size(); ++i)
      for (std::size_t j = 0; j < 3; ++j)
        EXPECT_NEAR(out["data"][i * 3 + j].get<double>(), cases[i]["logits"][j].get<double>(), 1e-4)
            << name << " " << cases[i]["id"];
  }
}

TEST_F(ServeGoldens, EmbeddingsThroughTeiOpenAiKserveAndToolkit) {
  const auto g = read_golden("bert-tiny-embed");
  const auto cases = text_cases(g, 8);
  json texts = json::array();
  std::vector<json> singles;
  for (const auto& c : cases)
    if (c.contains("text") && !c["text"].get<std::string>().empty()) {
      texts.push_back(c["text"]);
      singles.push_back(c);
    }
  auto r = post_json(port(), "/embed", json{{"inputs", texts}}.dump(), target("embed"));
  ASSERT_EQ(r.status, 200) << r.body;
  auto answer = json::parse(r.body);
  for (std::size_t i = 0; i < singles.size(); ++i)
    EXPECT_GE(cosine(answer[i].get<std::vector<float>>(),
                     singles[i]["embedding"]["mean_l2"].get<std::vector<float>>()),
              0.9999);

  // OpenAI with token ids (no tokenizer involved), float and base64 agree.
  json token_lists = json::array();
  for (const auto& c : singles) token_lists.push_back(c["input_ids"]);
  r = post_json(port(), "/v1/embeddings", json{{"input", token_lists}, {"model", "embed"}}.dump());
  ASSERT_EQ(r.status, 200) << r.body;
  answer = json::parse(r.body);
  std::size_t tokens = 0;
  for (std::size_t i = 0; i < singles.size(); ++i) {
    tokens += singles[i]["input_ids"].size();
    const auto v = answer["data"][i]["embedding"].get<std::vector<float>>();
    const auto expected = singles[i]["embedding"]["mean_l2"].get<std::vector<float>>();
    for (std::size_t d = 0; d < v.size(); ++d) EXPECT_NEAR(v[d], expected[d], 1e-4);
  }
  EXPECT_EQ(answer["usage"]["prompt_tokens"], tokens);

  // Toolkit feature extraction: token level; the first token is the golden CLS vector.
  r = post_json(port(), "/invocations", json{{"inputs", singles[0]["text"]}}.dump(),
                target("embed"));
  ASSERT_EQ(r.status, 200) << r.body;
  answer = json::parse(r.body);
  ASSERT_EQ(answer[0].size(), singles[0]["num_tokens"].get<std::size_t>());
  EXPECT_GE(cosine(answer[0][0].get<std::vector<float>>(),
                   singles[0]["embedding"]["cls"].get<std::vector<float>>()),
            0.9999);

  // KServe text input: pooled embeddings.
  json body = {{"inputs",
                {{{"name", "text"},
                  {"shape", {1}},
                  {"datatype", "BYTES"},
                  {"data", {singles[1]["text"]}}}}}};
  r = post_json(port(), "/v2/models/embed/infer", body.dump());
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_GE(cosine(json::parse(r.body)["outputs"][0]["data"].get<std::vector<float>>(),
                   singles[1]["embedding"]["mean"].get<std::vector<float>>()),
            0.9999);
}

// TEI's /embed (mean pooling, normalized) and /embed_all (every token) of the embedder served as
// `model` against its golden (`folder`), from text through the folder's tokenizer and encoder.
// Returns the texts it sent (the non-empty cases' texts, at most 12).
json expect_tei_embeddings_match_golden(int port, const std::string& model,
                                        const std::string& folder) {
  const auto g = read_golden(folder);
  json texts = json::array();
  std::vector<json> singles;
  for (const auto& c : text_cases(g, 12)) {
    if (!c.contains("text") || c["text"].get<std::string>().empty()) continue;
    texts.push_back(c["text"]);
    singles.push_back(c);
  }
  EXPECT_GE(singles.size(), 8u);
  const auto r = post_json(port, "/embed", json{{"inputs", texts}}.dump(), target(model));
  EXPECT_EQ(r.status, 200) << r.body;
  const auto answer = json::parse(r.body);
  EXPECT_EQ(answer.size(), singles.size());
  for (std::size_t i = 0; i < singles.size() && i < answer.size(); ++i) {
    const auto v = answer[i].get<std::vector<float>>();
    const auto expected = singles[i]["embedding"]["mean_l2"].get<std::vector<float>>();
    EXPECT_EQ(v.size(), expected.size());
    for (std::size_t d = 0; d < v.size() && d < expected.size(); ++d)
      EXPECT_NEAR(v[d], expected[d], 1e-4) << singles[i]["id"] << " [" << d << "]";
  }

  // /embed_all: every token's last hidden state; its first row is the golden CLS vector and
  // the rows' mean the golden mean.
  const json two = json::array({texts[0], texts[1]});
  const auto all = post_json(port, "/embed_all", json{{"inputs", two}}.dump(), target(model));
  EXPECT_EQ(all.status, 200) << all.body;
  EXPECT_FALSE(all.header("x-inference-time").empty());
  const auto rows = json::parse(all.body);
  EXPECT_EQ(rows.size(), 2u);
  for (std::size_t i = 0; i < 2 && i < rows.size(); ++i) {
    EXPECT_EQ(rows[i].size(), singles[i]["num_tokens"].get<std::size_t>());
    const auto cls = singles[i]["embedding"]["cls"].get<std::vector<float>>();
    const auto mean = singles[i]["embedding"]["mean"].get<std::vector<float>>();
    for (std::size_t d = 0; d < cls.size(); ++d) {
      EXPECT_NEAR(rows[i][0][d].get<double>(), cls[d], 1e-4);
      double sum = 0;
      for (const auto& row : rows[i]) sum += row[d].get<double>();
      EXPECT_NEAR(sum / static_cast<double>(rows[i].size()), mean[d], 1e-4);
    }
  }
  return texts;
}

// MPNet as all-mpnet-base-v2 is served, through the relative-position-biased encoder.
TEST_F(ServeGoldens, MpnetEmbeddingsThroughTeiEmbedAndEmbedAll) {
  const json texts = expect_tei_embeddings_match_golden(port(), "membed", "mpnet-tiny-embed");
  const auto all = post_json(port(), "/embed_all", json{{"inputs", json::array({texts[0]})}}.dump(),
                             target("membed"));
  ASSERT_EQ(all.status, 200) << all.body;
  const auto rows = json::parse(all.body);
  // A single string is a list of one; a classifier is not an embedder.
  const auto one =
      post_json(port(), "/embed_all", json{{"inputs", texts[0]}}.dump(), target("membed"));
  ASSERT_EQ(one.status, 200) << one.body;
  EXPECT_EQ(json::parse(one.body), rows);
  const auto refused =
      post_json(port(), "/embed_all", json{{"inputs", texts[0]}}.dump(), target("mnli"));
  EXPECT_EQ(refused.status, 422) << refused.body;
  EXPECT_EQ(json::parse(refused.body)["error_type"], "Validation");
}

// NomicBERT as nomic-embed-text-v1.5 is served (remote code on the Hub, onepass's own encoder),
// and with TEI's `dimensions` (Matryoshka): the first N values of the mean, then normalized.
TEST_F(ServeGoldens, NomicBertEmbeddingsThroughTeiEmbedAndEmbedAll) {
  const json texts = expect_tei_embeddings_match_golden(port(), "nembed", "nomic-bert-tiny-embed");
  const auto g = read_golden("nomic-bert-tiny-embed");
  const auto r = post_json(port(), "/embed", json{{"inputs", texts[0]}, {"dimensions", 16}}.dump(),
                           target("nembed"));
  ASSERT_EQ(r.status, 200) << r.body;
  const auto v = json::parse(r.body)[0].get<std::vector<float>>();
  ASSERT_EQ(v.size(), 16u);
  std::vector<float> mean;
  for (const auto& c : text_cases(g, 12))
    if (c.contains("text") && c["text"] == texts[0] && mean.empty())
      mean = c["embedding"]["mean"].get<std::vector<float>>();
  ASSERT_GE(mean.size(), 16u);
  double norm = 0;
  for (std::size_t d = 0; d < 16; ++d) norm += static_cast<double>(mean[d]) * mean[d];
  for (std::size_t d = 0; d < 16; ++d) EXPECT_NEAR(v[d], mean[d] / std::sqrt(norm), 1e-4) << d;
}

// GTE as gte-base-en-v1.5 is served (remote code on the Hub, onepass's own encoder).
TEST_F(ServeGoldens, GteEmbeddingsThroughTeiEmbedAndEmbedAll) {
  expect_tei_embeddings_match_golden(port(), "gembed", "gte-tiny-embed");
}

// TEI's /rerank of the cross-encoder served as `model` against its golden (`folder`): sigmoid
// scores sorted from the best, and raw_scores the logits.
void expect_rerank_matches_golden(int port, const std::string& model, const std::string& folder) {
  const auto g = read_golden(folder);
  const auto cases = text_cases(g, 40);
  // Documents that share the first case's query.
  const std::string query = cases[0]["pair"][0];
  std::vector<json> docs;
  for (const auto& c : cases)
    if (c["pair"][0] == query && !c["pair"][1].get<std::string>().empty()) docs.push_back(c);
  ASSERT_GE(docs.size(), 2u);
  json texts = json::array();
  for (const auto& d : docs) texts.push_back(d["pair"][1]);
  auto r =
      post_json(port, "/rerank", json{{"query", query}, {"texts", texts}}.dump(), target(model));
  ASSERT_EQ(r.status, 200) << r.body;
  auto answer = json::parse(r.body);
  ASSERT_EQ(answer.size(), docs.size());
  for (const auto& e : answer)
    EXPECT_NEAR(e["score"].get<double>(), docs[e["index"].get<int>()]["probs"][0].get<double>(),
                1e-5);
  for (std::size_t i = 1; i < answer.size(); ++i)
    EXPECT_GE(answer[i - 1]["score"].get<double>(), answer[i]["score"].get<double>());
  r = post_json(port, "/rerank",
                json{{"query", query}, {"texts", texts}, {"raw_scores", true}}.dump(),
                target(model));
  answer = json::parse(r.body);
  for (const auto& e : answer)
    EXPECT_NEAR(e["score"].get<double>(), docs[e["index"].get<int>()]["logits"][0].get<double>(),
                1e-4);
}

TEST_F(ServeGoldens, RerankScoresAreGoldenSigmoids) {
  expect_rerank_matches_golden(port(), "rerank", "bert-tiny-rerank");
}

// gte-multilingual-reranker-base's shape: GTE's sequence classifier behind an XLM-R tokenizer.
TEST_F(ServeGoldens, GteRerankerScoresAreGoldenSigmoids) {
  expect_rerank_matches_golden(port(), "grerank", "gte-tiny-rerank");
}

TEST_F(ServeGoldens, ZeroShotFromTheModelsOwnLogits) {
  const std::string sequence = "A man is playing a guitar on a busy street corner.";
  const std::vector<std::string> labels = {"music", "cooking", "sports"};
  // The model's raw logits for each premise/hypothesis pair, through the toolkit.
  std::vector<std::vector<double>> logits;
  for (const auto& label : labels) {
    const json body = {
        {"inputs", {{"text", sequence}, {"text_pair", "This example is " + label + "."}}},
        {"parameters", {{"top_k", nullptr}, {"function_to_apply", "none"}}}};
    const auto r = post_json(port(), "/invocations", body.dump(), target("nli"));
    ASSERT_EQ(r.status, 200) << r.body;
    std::vector<double> row(3);
    const std::vector<std::string> id2label = {"contradiction", "entailment", "neutral"};
    for (const auto& e : json::parse(r.body))
      for (int k = 0; k < 3; ++k)
        if (e["label"] == id2label[k]) row[k] = e["score"].get<double>();
    logits.push_back(row);
  }
  double sum = 0;
  for (const auto& row : logits) sum += std::exp(row[1]);
  auto r =
      post_json(port(), "/invocations",
                json{{"inputs", sequence}, {"parameters", {{"candidate_labels", labels}}}}.dump(),
                target("nli"));
  ASSERT_EQ(r.status, 200) << r.body;
  auto answer = json::parse(r.body);
  EXPECT_EQ(answer["sequence"], sequence);
  for (std::size_t i = 0; i < labels.size(); ++i) {
    const auto at =
        std::find(labels.begin(), labels.end(), answer["labels"][i].get<std::string>()) -
        labels.begin();
    EXPECT_NEAR(answer["scores"][i].get<double>(), std::exp(logits[at][1]) / sum, 1e-5);
  }
  // multi_label through TEI's /zero_shot: softmax over [contradiction, entailment] per label.
  r = post_json(
      port(), "/zero_shot",
      json{{"inputs", sequence}, {"candidate_labels", labels}, {"multi_label", true}}.dump(),
      target("nli"));
  ASSERT_EQ(r.status, 200) << r.body;
  answer = json::parse(r.body);
  for (std::size_t i = 0; i < labels.size(); ++i) {
    const auto at =
        std::find(labels.begin(), labels.end(), answer["labels"][i].get<std::string>()) -
        labels.begin();
    EXPECT_NEAR(answer["scores"][i].get<double>(),
                1.0 / (1.0 + std::exp(logits[at][0] - logits[at][1])), 1e-5);
  }
  // The Inference API on POST /: one text, one {sequence, labels, scores} object (the shape the
  // Hugging Face clients read), the same answer as /invocations.
  const std::string zero_shot =
      json{{"inputs", sequence}, {"parameters", {{"candidate_labels", labels}}}}.dump();
  r = post_json(port(), "/", zero_shot, target("nli"));
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_TRUE(json::parse(r.body).is_object()) << r.body;
  EXPECT_EQ(json::parse(r.body),
            json::parse(post_json(port(), "/invocations", zero_shot, target("nli")).body));
}

}  // namespace
}  // namespace onepass::testing
