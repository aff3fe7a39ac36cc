// Token classification through the runtime on the real engine and tokenizers: every golden text
// of bert-tiny-ner and xlmr-tiny-ner in one client batch gets transformers' per-token logits
// (within 1e-4) and its encoding, alone equals batched, the `none` entities are exactly the
// golden's non-O tokens, and a request for another output kind is refused.
#include "model/heads/token_classification.h"

#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>

#include "call.h"

namespace onepass::runtime {
namespace {

using namespace testing;
using namespace std::chrono_literals;
using nlohmann::json;

const char* const kModels[] = {"bert-tiny-ner", "xlmr-tiny-ner"};

json golden(const std::string& model) {
  std::ifstream in(fixture_model(model) / "golden.json");
  return json::parse(in);
}

std::vector<float> flat(const json& rows) {
  std::vector<float> out;
  for (const auto& row : rows)
    for (const auto& v : row) out.push_back(static_cast<float>(v.get<double>()));
  return out;
}

class TokenClassification : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    RuntimeOptions o;
    for (const char* m : kModels) o.models.push_back({m, fixture_model(m)});
    o.threads = 1;
    runtime_ = new Runtime(o);
    ASSERT_TRUE(runtime_->wait_ready(60s));
  }
  static void TearDownTestSuite() {
    delete runtime_;
    runtime_ = nullptr;
  }
  static Runtime* runtime_;
};
Runtime* TokenClassification::runtime_ = nullptr;

TEST_F(TokenClassification, TextsGetGoldenTokenLogitsAndNoneEntitiesAreTheNonOTokens) {
  for (const char* model : kModels) {
    SCOPED_TRACE(model);
    const auto described = runtime_->find_model(model);
    ASSERT_TRUE(described);
    EXPECT_EQ(described->task, ModelTask::kTokenClassifier);
    const json g = golden(model);
    std::vector<const json*> cases;
    InferenceRequest all;
    all.model = model;
    all.output = OutputKind::kTokenLogits;
    for (const auto& c : g["cases"]) {
      // Single texts the slow tokenizer (the goldens') and onepass agree on, untruncated.
      if (!c.contains("text") || c.contains("truncation") || c.contains("fast_input_ids")) continue;
      InferenceItem item;
      item.text = c["text"].get<std::string>();
      all.items.push_back(item);
      cases.push_back(&c);
    }
    ASSERT_GE(cases.size(), 20u);
    const InferenceResult batched = submit(*runtime_, all).get();
    std::string message;
    ASSERT_FALSE(result_error(batched, &message)) << message;
    const std::size_t labels = described->info.id2label.size();
    for (std::size_t i = 0; i < cases.size(); ++i) {
      const json& c = *cases[i];
      SCOPED_TRACE(c["id"].get<std::string>());
      const ItemOutput& out = batched.items[i];
      const auto expected = flat(c["logits"]);
      ASSERT_EQ(out.values.size(), expected.size());
      float worst = 0;
      for (std::size_t k = 0; k < expected.size(); ++k)
        worst = std::max(worst, std::abs(out.values[k] - expected[k]));
      EXPECT_LE(worst, 1e-4f);
      ASSERT_EQ(out.encoding.ids, c["input_ids"].get<std::vector<std::int32_t>>());

      // The same text alone.
      InferenceRequest one = all;
      one.items = {all.items[i]};
      const InferenceResult alone = submit(*runtime_, one).get();
      ASSERT_FALSE(result_error(alone, &message)) << message;
      ASSERT_EQ(alone.items[0].values.size(), out.values.size());
      for (std::size_t k = 0; k < out.values.size(); ++k)
        EXPECT_LE(std::abs(alone.items[0].values[k] - out.values[k]), 1e-5f);

      // aggregation none, ignore ["O"]: one entity per non-special token whose golden label is
      // not O, with that label, its index and (unless unknown) its golden token string.
      model::heads::TokenizedSequence seq{all.items[i].text,    out.values,
                                          out.encoding.ids,     out.encoding.tokens,
                                          out.encoding.offsets, out.encoding.special_tokens_mask};
      const auto entities = model::heads::extract_entities(
          seq, described->info.id2label, out.token_style, model::heads::Aggregation::kNone, {"O"});
      const auto golden_labels = c["labels"].get<std::vector<std::string>>();
      const auto golden_tokens = c["tokens"].get<std::vector<std::string>>();
      std::size_t e = 0;
      for (std::size_t t = 0; t < golden_labels.size(); ++t) {
        if (out.encoding.special_tokens_mask[t] || golden_labels[t] == "O") continue;
        ASSERT_LT(e, entities.size());
        EXPECT_EQ(*entities[e].index, t);
        EXPECT_EQ(entities[e].label, golden_labels[t]);
        if (out.encoding.ids[t] != out.token_style.unk_token_id) {
          EXPECT_EQ(entities[e].word, golden_tokens[t]);
        }
        const float* row = out.values.data() + t * labels;
        const float top = *std::max_element(row, row + labels);
        double z = 0;
        for (std::size_t k = 0; k < labels; ++k) z += std::exp(double(row[k]) - top);
        EXPECT_NEAR(entities[e].score, 1.0 / z, 1e-6);
        ++e;
      }
      EXPECT_EQ(e, entities.size());
    }
  }
}

TEST_F(TokenClassification, OtherOutputKindsAreRefusedBeforeAdmission) {
  for (OutputKind kind : {OutputKind::kLogits, OutputKind::kPooled, OutputKind::kTokens}) {
    InferenceRequest r;
    r.model = "bert-tiny-ner";
    r.output = kind;
    InferenceItem item;
    item.text = "Paris";
    r.items.push_back(item);
    std::string message;
    EXPECT_EQ(thrown_kind([&] { runtime_->submit(r, [](InferenceResult) {}); }, &message),
              ErrorKind::kInvalidArgument);
    EXPECT_NE(message.find("token classifier"), std::string::npos) << message;
  }
}

}  // namespace
}  // namespace onepass::runtime
