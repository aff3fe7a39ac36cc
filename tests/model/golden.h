// The fixtures' golden.json files (see tests/data/fixtures/README.md, read by
// tests/support/golden_file.h) as plain structs, for any model folder: classification cases carry
// logits/probs/label, embedding cases the pooled vectors and pooler_output, token-classification
// cases every token's logits and label.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "model/encoder.h"
#include "tests/support/fixture_catalogue.h"
#include "tests/support/golden_file.h"

namespace onepass::testing {

// Every fixture the golden and batch-invariance suites run: the catalogue's
// (tests/support/fixture_catalogue.h), but the sentence-transformers folders (the
// sentence-transformers tests name those) and GLiNER's (tests/runtime/extract_test.cpp).
inline std::vector<std::string> golden_models() {
  return fixtures_where([](const Fixture& f) {
    return !f.has(kSentenceTransformers) && f.task != FixtureTask::kExtractor;
  });
}

struct GoldenCase {
  std::string id;
  std::vector<std::int32_t> input_ids;
  std::vector<std::int32_t> token_type_ids;  // empty when the golden lists none
  std::vector<float> logits;  // token classification: [num_tokens, num_labels], flattened
  std::vector<float> probs;
  std::vector<std::string> token_labels;  // token classification: id2label of each arg-max
  std::string label;
  std::map<std::string, std::vector<float>> embedding;  // cls, mean, cls_l2, mean_l2
  std::vector<float> pooler_output;
  // sparse_embedding: the SPLADE vector's non-zero entries, in index order.
  std::vector<std::int32_t> splade_indices;
  std::vector<float> splade_values;

  model::SequenceInput input() const { return {input_ids, token_type_ids}; }
};

struct Golden {
  std::string model;
  std::string task;  // "nli", "embedding", "rerank", "token_classification", "sparse_embedding"
  std::vector<GoldenCase> cases;
};

inline std::filesystem::path fixture_model_dir(const std::string& name) {
  return std::filesystem::path(ONEPASS_TEST_DATA_DIR) / "fixtures/models" / name;
}

inline std::vector<float> float_list(const nlohmann::json& j) {
  std::vector<float> out;
  for (const auto& v : j) out.push_back(static_cast<float>(v.get<double>()));  // exact float32 bits
  return out;
}

inline Golden load_golden(const std::string& model_name) {
  const auto j = read_golden(model_name);
  Golden golden;
  golden.model = j.at("model").get<std::string>();
  golden.task = j.at("task").get<std::string>();
  for (const auto& c : j.at("cases")) {
    GoldenCase g;
    g.id = c.at("id").get<std::string>();
    g.input_ids = c.at("input_ids").get<std::vector<std::int32_t>>();
    if (c.contains("token_type_ids"))
      g.token_type_ids = c.at("token_type_ids").get<std::vector<std::int32_t>>();
    if (c.contains("logits")) {
      for (const auto& v : c.at("logits")) {
        if (!v.is_array()) {
          g.logits.push_back(static_cast<float>(v.get<double>()));
          continue;
        }
        const auto row = float_list(v);
        g.logits.insert(g.logits.end(), row.begin(), row.end());
      }
    }
    if (c.contains("labels")) g.token_labels = c.at("labels").get<std::vector<std::string>>();
    if (c.contains("probs")) g.probs = float_list(c.at("probs"));
    if (c.contains("label")) g.label = c.at("label").get<std::string>();
    if (c.contains("embedding")) {
      for (const auto& [k, v] : c.at("embedding").items()) g.embedding[k] = float_list(v);
    }
    if (c.contains("pooler_output")) g.pooler_output = float_list(c.at("pooler_output"));
    if (c.contains("splade")) {
      g.splade_indices = c.at("splade").at("indices").get<std::vector<std::int32_t>>();
      g.splade_values = float_list(c.at("splade").at("values"));
    }
    golden.cases.push_back(std::move(g));
  }
  return golden;
}

}  // namespace onepass::testing
