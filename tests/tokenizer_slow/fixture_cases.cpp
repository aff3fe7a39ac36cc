#include "fixture_cases.h"

#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>
#include <stdexcept>

namespace onepass::tokenizer::testing {

namespace fs = std::filesystem;

fs::path fixtures_dir() { return fs::path(ONEPASS_TEST_DATA_DIR) / "fixtures"; }

std::vector<std::string> model_names() {
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(fixtures_dir() / "models")) {
    if (!entry.is_directory()) continue;
    // A GLiNER folder's golden holds GLiNER's entities, not token ids; its tokenizer (DeBERTa-v2's
    // spm.model with the prompt's added tokens) is held to GLiNER's own word ids by its entity
    // goldens (tests/runtime/extract_test.cpp).
    if (fs::is_regular_file(entry.path() / "gliner_config.json")) continue;
    // A byte-level BPE folder (vocab.json + merges.txt) is served from its tokenizer.json only.
    bool slow = false;
    for (const char* name : {"spm.model", "sentencepiece.bpe.model", "vocab.txt"})
      slow = slow || fs::is_regular_file(entry.path() / name);
    if (slow) names.push_back(entry.path().filename().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

std::vector<std::string> model_names_with(const std::string& file) {
  std::vector<std::string> names;
  for (const auto& name : model_names()) {
    if (fs::is_regular_file(fixtures_dir() / "models" / name / file)) names.push_back(name);
  }
  return names;
}

std::vector<FixtureCase> read_cases(const std::string& model, const std::string& file) {
  std::ifstream in(fixtures_dir() / "models" / model / file);
  if (!in) throw std::runtime_error("missing " + model + "/" + file);
  const auto doc = nlohmann::json::parse(in);
  std::vector<FixtureCase> cases;
  for (const auto& c : doc.at("cases")) {
    FixtureCase out;
    out.id = c.at("id").get<std::string>();
    if (c.contains("question")) {
      // A question-answering window: the pair (question, context) when the context fits in one;
      // the windows of a longer one are the QA pipeline tests' (tests/server/serve_qa_test.cpp).
      if (c.at("windows").get<int>() != 1) continue;
      out.text = c["question"].get<std::string>();
      out.pair = c.at("context").get<std::string>();
    } else if (c.contains("pair")) {
      out.text = c["pair"].at(0).get<std::string>();
      out.pair = c["pair"].at(1).get<std::string>();
    } else {
      // A sentence-transformers prompt is joined before the text (golden.json says so).
      out.text = c.value("prompt", std::string()) + c.at("text").get<std::string>();
    }
    if (c.contains("max_length")) {
      out.truncation.max_length = c["max_length"].get<std::size_t>();
      const auto strategy = c.at("truncation").get<std::string>();
      out.truncation.strategy = strategy == "only_first"    ? TruncationStrategy::kOnlyFirst
                                : strategy == "only_second" ? TruncationStrategy::kOnlySecond
                                                            : TruncationStrategy::kLongestFirst;
    }
    out.input_ids = c.at("input_ids").get<std::vector<std::int32_t>>();
    if (c.contains("token_type_ids")) {
      out.token_type_ids = c["token_type_ids"].get<std::vector<std::int32_t>>();
    }
    if (c.contains("tokens")) out.tokens = c["tokens"].get<std::vector<std::string>>();
    if (c.contains("word_ids")) {
      out.word_ids.emplace();
      for (const auto& w : c["word_ids"]) out.word_ids->push_back(w.is_null() ? -1 : w.get<int>());
    }
    cases.push_back(std::move(out));
  }
  return cases;
}

fs::path slow_source(const std::string& model) {
  const fs::path dir = fixtures_dir() / "models" / model;
  for (const char* name : {"spm.model", "sentencepiece.bpe.model", "vocab.txt"}) {
    if (fs::is_regular_file(dir / name)) return dir / name;
  }
  throw std::runtime_error(model + " has no slow tokenizer file");
}

}  // namespace onepass::tokenizer::testing
