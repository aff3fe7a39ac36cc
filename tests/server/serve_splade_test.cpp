// End to end: SPLADE sparse embedders (BertForMaskedLM, DistilBertForMaskedLM) through the real
// `onepass serve` binary: TEI's /embed_sparse and KServe v2 against the fixtures' golden vectors
// (golden.json, from transformers), TEI's /info, and every route that cannot answer a sparse
// vector refusing it by name (/invocations answers fill-mask instead).
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <nlohmann/json.hpp>

#include "serve_suite.h"
#include "tests/support/golden_file.h"
#include "tests/support/http_client.h"
#include "tests/support/paths.h"
#include "tests/support/serve_process.h"

namespace onepass::testing {
namespace {

using nlohmann::json;

// The golden's non-zero entries, by vocabulary index.
std::map<int, double> golden_entries(const json& c) {
  std::map<int, double> out;
  for (std::size_t i = 0; i < c["splade"]["indices"].size(); ++i)
    out[c["splade"]["indices"][i].get<int>()] = c["splade"]["values"][i].get<double>();
  return out;
}

class ServeSplade : public ServeSuite<ServeSplade> {
 public:
  static std::vector<std::string> server_args() {
    return {"--model", "splade=" + fixture_model("bert-tiny-splade"),
            "--model", "dsplade=" + fixture_model("distilbert-tiny-splade"),
            "--model", "xsplade=" + fixture_model("xlmr-tiny-mlm"),
            "--model", "embed=" + fixture_model("bert-tiny-embed")};
  }
};

TEST_F(ServeSplade, TeiEmbedSparseGivesTheGoldenVectors) {
  for (const auto& [name, folder] :
       std::vector<std::pair<std::string, std::string>>{{"splade", "bert-tiny-splade"},
                                                        {"dsplade", "distilbert-tiny-splade"},
                                                        {"xsplade", "xlmr-tiny-mlm"}}) {
    SCOPED_TRACE(name);
    const auto g = read_golden(folder);
    json texts = json::array();
    std::vector<json> cases;
    for (const auto& c : g["cases"]) {
      if (c.contains("truncation") || !c.contains("text") || c["text"] == "") continue;
      texts.push_back(c["text"]);
      cases.push_back(c);
      if (cases.size() == 8) break;
    }
    const auto r = post_json(port(), "/embed_sparse", json{{"inputs", texts}}.dump(), target(name));
    ASSERT_EQ(r.status, 200) << r.body;
    EXPECT_FALSE(r.header("x-inference-time").empty());
    const auto answer = json::parse(r.body);
    ASSERT_EQ(answer.size(), cases.size());
    for (std::size_t i = 0; i < cases.size(); ++i) {
      SCOPED_TRACE(cases[i]["id"].get<std::string>());
      const auto expected = golden_entries(cases[i]);
      ASSERT_EQ(answer[i].size(), expected.size());
      int previous = -1;
      for (const auto& entry : answer[i]) {
        const int index = entry["index"].get<int>();
        EXPECT_GT(index, previous) << "in index order";
        previous = index;
        ASSERT_TRUE(expected.count(index)) << index;
        EXPECT_NEAR(entry["value"].get<double>(), expected.at(index), 1e-4) << index;
      }
    }
  }
}

TEST_F(ServeSplade, KserveGivesTheDenseVectorFromIds) {
  const auto g = read_golden("bert-tiny-splade");
  const auto& c = g["cases"][0];
  const auto n = c["input_ids"].size();
  const json shape = {1, n};
  const json body = {
      {"inputs",
       {{{"name", "input_ids"}, {"shape", shape}, {"datatype", "INT64"}, {"data", c["input_ids"]}},
        {{"name", "token_type_ids"},
         {"shape", shape},
         {"datatype", "INT64"},
         {"data", c["token_type_ids"]}}}}};
  const auto r = post_json(port(), "/v2/models/splade/infer", body.dump());
  ASSERT_EQ(r.status, 200) << r.body;
  const auto out = json::parse(r.body)["outputs"][0];
  EXPECT_EQ(out["name"], "sparse_embeddings");
  const auto vocab = out["shape"][1].get<std::size_t>();
  ASSERT_EQ(out["data"].size(), vocab);
  const auto expected = golden_entries(c);
  for (std::size_t v = 0; v < vocab; ++v) {
    const double want = expected.count(static_cast<int>(v)) ? expected.at(static_cast<int>(v)) : 0;
    EXPECT_NEAR(out["data"][v].get<double>(), want, 1e-4) << v;
  }
  const auto metadata = get(port(), "/v2/models/splade");
  ASSERT_EQ(metadata.status, 200) << metadata.body;
  EXPECT_EQ(json::parse(metadata.body)["outputs"][0]["shape"], json::array({-1, vocab}));
}

TEST_F(ServeSplade, InfoSaysSpladeAndOtherRoutesRefuseByName) {
  const auto info = get(port(), "/info", target("splade"));
  ASSERT_EQ(info.status, 200) << info.body;
  EXPECT_EQ(json::parse(info.body)["model_type"]["embedding"]["pooling"], "splade");

  struct Refusal {
    std::string path, body;
    int status;
  };
  for (const auto& [path, body, status] : std::vector<Refusal>{
           {"/embed", R"({"inputs":"a"})", 422},
           {"/embed_all", R"({"inputs":"a"})", 422},
           {"/predict", R"({"inputs":"a"})", 422},
           {"/classify", R"({"model":"splade","input":"a"})", 400},
       }) {
    SCOPED_TRACE(path);
    const auto r = post_json(port(), path, body, target("splade"));
    EXPECT_EQ(r.status, status) << r.body;
    EXPECT_NE(r.body.find("sparse"), std::string::npos) << r.body;
  }
  // /invocations runs the fill-mask pipeline on a masked-LM model (serve_fill_mask_test.cpp):
  // a text without the mask token is refused naming it.
  const auto invocations = post_json(port(), "/invocations", R"({"inputs":"a"})", target("splade"));
  EXPECT_EQ(invocations.status, 422) << invocations.body;
  EXPECT_NE(invocations.body.find("[MASK]"), std::string::npos) << invocations.body;
  // The OpenAI embeddings route serves dense embedders only.
  const auto openai = post_json(port(), "/v1/embeddings", R"({"input":"a","model":"splade"})");
  EXPECT_GE(openai.status, 400) << openai.body;
  // And /embed_sparse refuses a dense embedder.
  const auto dense = post_json(port(), "/embed_sparse", R"({"inputs":"a"})", target("embed"));
  EXPECT_EQ(dense.status, 422) << dense.body;
  EXPECT_NE(dense.body.find("not a sparse embedding model"), std::string::npos) << dense.body;
}

}  // namespace
}  // namespace onepass::testing
