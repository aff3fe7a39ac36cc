// Every golden case of every fixture model, fed from its input_ids, against transformers'
// outputs: logits (per token for token classifiers) within 1e-4 absolute and identical labels;
// SPLADE vectors within 1e-4, zero where transformers' are; embeddings with cosine >= 0.9999
// (max abs diff reported). Every fixture of the catalogue runs (tests/support/fixture_catalogue.h,
// golden_models() in tests/model/golden.h): a new folder is one line there.
#include "tests/model/golden.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "model/encoder.h"
#include "model/heads/postprocess.h"
#include "tests/support/vector_compare.h"

namespace onepass::model {
namespace {

using onepass::testing::cosine;
using onepass::testing::fixture_model_dir;
using onepass::testing::load_golden;
using onepass::testing::max_abs_diff;

class GoldenTest : public ::testing::TestWithParam<std::string> {};

TEST_P(GoldenTest, EveryCaseAloneMatchesTransformers) {
  const auto golden = load_golden(GetParam());
  const auto encoder = load_encoder(fixture_model_dir(GetParam()));
  const auto& info = encoder->info();
  ASSERT_FALSE(golden.cases.empty());
  float worst_logit = 0.0f, worst_embedding = 0.0f;
  double worst_cosine = 1.0;
  for (const auto& c : golden.cases) {
    SCOPED_TRACE(c.id);
    const SequenceInput input = c.input();
    ForwardOutput out;
    encoder->forward(std::span(&input, 1), out);
    if (info.head == HeadKind::kSequenceClassification) {
      ASSERT_EQ(out.logits.size(), c.logits.size());
      const float diff = max_abs_diff(out.logits, c.logits);
      worst_logit = std::max(worst_logit, diff);
      EXPECT_LE(diff, 1e-4f);
      std::vector<float> probs(out.logits.size());
      heads::probabilities(out.logits, info.multi_label, probs);
      EXPECT_LE(max_abs_diff(probs, c.probs), 1e-4f);
      EXPECT_EQ(heads::label_for(out.logits, info.id2label), c.label);
    } else if (per_token_head(info.head)) {
      // One row of num_labels logits per token, special tokens included (question answering:
      // the start and the end logit; its goldens list no labels).
      const auto labels = static_cast<std::size_t>(info.num_labels);
      ASSERT_EQ(out.token_offsets.back(), c.input_ids.size());
      ASSERT_EQ(out.logits.size(), c.logits.size());
      ASSERT_EQ(out.logits.size(), c.input_ids.size() * labels);
      if (info.head == HeadKind::kTokenClassification) {
        ASSERT_EQ(c.token_labels.size(), c.input_ids.size());
      }
      const float diff = max_abs_diff(out.logits, c.logits);
      worst_logit = std::max(worst_logit, diff);
      EXPECT_LE(diff, 1e-4f);
      for (std::size_t t = 0; t < c.token_labels.size(); ++t) {
        const std::span<const float> row(out.logits.data() + t * labels, labels);
        EXPECT_EQ(heads::label_for(row, info.id2label), c.token_labels[t]) << "token " << t;
      }
    } else if (info.head == HeadKind::kMaskedLm) {
      // The SPLADE vector, dense: the golden lists its non-zero entries.
      std::vector<float> expected(static_cast<std::size_t>(info.vocab_size), 0.0f);
      for (std::size_t i = 0; i < c.splade_indices.size(); ++i)
        expected.at(static_cast<std::size_t>(c.splade_indices[i])) = c.splade_values[i];
      ASSERT_EQ(out.logits.size(), expected.size());
      ASSERT_FALSE(c.splade_indices.empty());
      const float diff = max_abs_diff(out.logits, expected);
      worst_logit = std::max(worst_logit, diff);
      EXPECT_LE(diff, 1e-4f);
      std::size_t zeros = 0;
      for (float v : out.logits) zeros += v == 0.0f ? 1 : 0;
      EXPECT_EQ(zeros, expected.size() - c.splade_indices.size()) << "the same entries are 0";
    } else {
      const auto hidden = static_cast<std::size_t>(info.hidden_size);
      std::vector<float> v(hidden);
      for (const auto& [name, expected] : c.embedding) {
        const bool mean = name.rfind("mean", 0) == 0;
        heads::pool(out, hidden, 0, mean ? heads::Pooling::kMean : heads::Pooling::kCls, v);
        if (name.find("_l2") != std::string::npos) heads::l2_normalize(v);
        const double cos = cosine(v, expected);
        worst_cosine = std::min(worst_cosine, cos);
        worst_embedding = std::max(worst_embedding, max_abs_diff(v, expected));
        EXPECT_GE(cos, 0.9999) << name;
      }
      // A pooler exactly where transformers has one (ModernBertModel has none).
      ASSERT_EQ(info.has_pooler, !c.pooler_output.empty());
      ASSERT_EQ(out.pooler_output.size(), c.pooler_output.size());
      if (info.has_pooler) {
        EXPECT_GE(cosine(out.pooler_output, c.pooler_output), 0.9999) << "pooler_output";
        worst_embedding =
            std::max(worst_embedding, max_abs_diff(out.pooler_output, c.pooler_output));
      }
    }
  }
  RecordProperty("max_abs_logit_diff", std::to_string(worst_logit));
  RecordProperty("max_abs_embedding_diff", std::to_string(worst_embedding));
  std::printf("[%s] %zu cases: max |logit diff| %.3g, max |embedding diff| %.3g, min cosine %.9f\n",
              GetParam().c_str(), golden.cases.size(), worst_logit, worst_embedding, worst_cosine);
}

INSTANTIATE_TEST_SUITE_P(Fixtures, GoldenTest,
                         ::testing::ValuesIn(onepass::testing::golden_models()),
                         [](const auto& info) {
                           return onepass::testing::fixture_test_name(info.param);
                         });

}  // namespace
}  // namespace onepass::model
