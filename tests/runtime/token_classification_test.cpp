// Token classification through the runtime on the real engine and tokenizers: every golden text
// of bert-tiny-ner and xlmr-tiny-ner in one client batch gets transformers' per-token logits
// (within 1e-4) and its encoding, alone equals batched, the `none` entities are exactly the
// golden's non-O tokens, and a request for another output kind is refused.
#include "model/heads/token_classification.h"

#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>

#include "call.h"
#include "tests/support/fixture_catalogue.h"
#include "tests/support/golden_file.h"
#include "tests/support/temp_dir.h"

namespace onepass::runtime {
namespace {

using namespace testing;
using onepass::testing::TempDir;
using namespace std::chrono_literals;
using nlohmann::json;

// Every token-classification fixture of the catalogue (tests/support/fixture_catalogue.h).
const std::vector<std::string> kModels =
    onepass::testing::fixtures_with_task({onepass::testing::FixtureTask::kTokenClassifier});

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
    for (const auto& m : kModels) o.models.push_back({m, fixture_model(m)});
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
  for (const std::string& model : kModels) {
    SCOPED_TRACE(model);
    const auto described = runtime_->find_model(model);
    ASSERT_TRUE(described);
    EXPECT_EQ(described->task, ModelTask::kTokenClassifier);
    const json g = onepass::testing::read_golden(model);
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

// A token classifier whose tokenizer.json is byte-level BPE (xlmr-tiny-ner's weights with the
// RoBERTa tokenizer fixture, whose 3,000 ids fit its embedding table): the runtime hands the
// API the tokens as stand-ins and a style that reads them back as the ByteLevel decoder does.
// One group over every token (all "O", nothing ignored) reads back the whole text, é and ï
// whole again although "ï" is two tokens (tokenizer_cases.json h0015).
TEST(TokenClassificationByteLevel, TheRuntimeReadsByteLevelTokensBackAsText) {
  TempDir dir;
  const auto model = fixture_model("xlmr-tiny-ner");
  const auto tokenizer =
      std::filesystem::path(ONEPASS_TEST_DATA_DIR) / "fixtures/tokenizers/roberta-bpe-tiny";
  for (const char* file : {"config.json", "model.safetensors"})
    std::filesystem::create_symlink(model / file, dir.path() / file);
  for (const char* file : {"tokenizer.json", "tokenizer_config.json", "special_tokens_map.json"})
    std::filesystem::create_symlink(tokenizer / file, dir.path() / file);
  RuntimeOptions o;
  o.models.push_back({"ner", dir.path()});
  o.threads = 1;
  Runtime runtime(o);
  ASSERT_TRUE(runtime.wait_ready(60s));

  InferenceRequest r;
  r.model = "ner";
  r.output = OutputKind::kTokenLogits;
  InferenceItem item;
  item.text = "Th\xC3\xA9 caf\xC3\xA9 na\xC3\xAFve r\xC3\xA9sum\xC3\xA9";
  r.items.push_back(item);
  const InferenceResult result = submit(runtime, r).get();
  std::string message;
  ASSERT_FALSE(result_error(result, &message)) << message;
  const ItemOutput& out = result.items.at(0);
  EXPECT_TRUE(out.token_style.byte_level);
  EXPECT_FALSE(out.token_style.metaspace);
  EXPECT_TRUE(out.token_style.continuing_subword_prefix.empty());
  const std::vector<std::int32_t> ids = {0,   55,  75,   598, 2949, 2227, 131,
                                         111, 313, 2834, 86,  367,  598,  2};
  ASSERT_EQ(out.encoding.ids, ids);
  EXPECT_EQ(out.encoding.tokens[5],
            "\xC4\xA0"
            "na");  // "Ġna"

  std::vector<float> all_o(out.values.size(), 0.0f);
  for (std::size_t t = 0; t < ids.size(); ++t) all_o[t * 5] = 3.0f;
  const model::heads::TokenizedSequence seq{item.text,
                                            all_o,
                                            out.encoding.ids,
                                            out.encoding.tokens,
                                            out.encoding.offsets,
                                            out.encoding.special_tokens_mask};
  const std::vector<std::string> labels{"O", "B-PER", "I-PER", "B-LOC", "I-LOC"};
  const auto groups = model::heads::extract_entities(seq, labels, out.token_style,
                                                     model::heads::Aggregation::kSimple, {});
  ASSERT_EQ(groups.size(), 1u);
  EXPECT_EQ(groups[0].word, item.text);
  EXPECT_EQ(groups[0].start, 0u);
  EXPECT_EQ(groups[0].end, 21u);
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
