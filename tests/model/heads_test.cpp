// Post-processing against hand-computed values.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>

#include "base/error.h"
#include "model/encoder.h"
#include "model/heads/postprocess.h"
#include "tests/model/golden.h"
#include "tests/support/files.h"
#include "tests/support/temp_dir.h"

namespace onepass::model {
namespace {

TEST(Heads, SoftmaxSigmoidAndLabels) {
  const std::vector<float> logits{1.0f, 2.0f, 3.0f};
  std::vector<float> p(3);
  heads::probabilities(logits, false, p);
  const double z = std::exp(1.0) + std::exp(2.0) + std::exp(3.0);
  EXPECT_NEAR(p[0], std::exp(1.0) / z, 1e-7);
  EXPECT_NEAR(p[2], std::exp(3.0) / z, 1e-7);
  heads::probabilities(logits, true, p);  // multi-label: independent sigmoids
  EXPECT_NEAR(p[1], 1.0 / (1.0 + std::exp(-2.0)), 1e-7);
  std::vector<float> one{0.0f}, q(1);
  heads::probabilities(one, false, q);  // a 1-label model is a sigmoid scorer
  EXPECT_FLOAT_EQ(q[0], 0.5f);
  EXPECT_EQ(heads::label_for(logits, {"a", "b", "c"}), "c");
  EXPECT_EQ(heads::label_for(std::vector<float>{5, 5, 1}, {"a", "b", "c"}), "a");  // first on ties
  EXPECT_EQ(heads::label_for(logits, {"a"}), "LABEL_2");
}

TEST(Heads, PoolingAndNormalize) {
  ForwardOutput out;
  out.token_offsets = {0, 1, 4};
  out.hidden_states = {1, 2,               // sequence 0
                       2, 0, 4, 0, 6, 3};  // sequence 1: three tokens
  std::vector<float> v(2);
  heads::pool(out, 2, 1, heads::Pooling::kMean, v);
  EXPECT_FLOAT_EQ(v[0], 4.0f);
  EXPECT_FLOAT_EQ(v[1], 1.0f);
  heads::pool(out, 2, 1, heads::Pooling::kCls, v);
  EXPECT_FLOAT_EQ(v[0], 2.0f);
  std::vector<float> w{3.0f, 4.0f};
  heads::l2_normalize(w);
  EXPECT_FLOAT_EQ(w[0], 0.6f);
  EXPECT_FLOAT_EQ(w[1], 0.8f);
  std::vector<float> zero{0.0f, 0.0f};
  heads::l2_normalize(zero);  // max(norm, 1e-12): no division by zero
  EXPECT_EQ(zero[0], 0.0f);
}

TEST(Heads, CosineSimilarity) {
  const std::vector<float> a{3.0f, 4.0f};
  EXPECT_FLOAT_EQ(heads::cosine_similarity(a, std::vector<float>{6.0f, 8.0f}), 1.0f);
  EXPECT_FLOAT_EQ(heads::cosine_similarity(a, std::vector<float>{-4.0f, 3.0f}), 0.0f);
  EXPECT_FLOAT_EQ(heads::cosine_similarity(a, std::vector<float>{1.0f, 0.0f}), 0.6f);
  EXPECT_FLOAT_EQ(heads::cosine_similarity(a, std::vector<float>{-3.0f, -4.0f}), -1.0f);
  // A zero vector is 0 away from everything (torch.nn.functional.normalize's 1e-12 floor).
  EXPECT_EQ(heads::cosine_similarity(a, std::vector<float>{0.0f, 0.0f}), 0.0f);
}

TEST(Encoder, RefusesBadSequencesBeforeComputing) {
  const auto encoder = load_encoder(onepass::testing::fixture_model_dir("bert-tiny-nli"));
  const auto& info = encoder->info();
  EXPECT_EQ(info.max_tokens, 512);
  EXPECT_EQ(info.num_labels, 3);
  ForwardOutput out;
  const std::vector<std::int32_t> bad_id{12, 2600, 13};
  const std::vector<SequenceInput> batch{{bad_id, {}}};
  try {
    encoder->forward(batch, out);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kInvalidInput);
    EXPECT_THAT(e.what(), ::testing::HasSubstr("token id 2600 is outside the vocabulary"));
  }
  const std::vector<std::int32_t> long_seq(513, 20);
  const std::vector<SequenceInput> too_long{{long_seq, {}}};
  EXPECT_THROW(encoder->forward(too_long, out), Error);
  const std::vector<std::int32_t> empty;
  const std::vector<SequenceInput> empty_seq{{empty, {}}};
  EXPECT_THROW(encoder->forward(empty_seq, out), Error);
}

TEST(Encoder, XlmrPositionsLeaveRoomForPaddingIdx) {
  const auto encoder = load_encoder(onepass::testing::fixture_model_dir("xlmr-tiny-nli"));
  EXPECT_EQ(encoder->info().max_tokens, 512);  // 514 - pad_token_id 1 - 1
  EXPECT_EQ(encoder->info().type_vocab_size, 1);
}

TEST(Encoder, RefusesUnknownArchitectureListingSupported) {
  onepass::testing::TempDir dir("arch");
  auto config = nlohmann::json::parse(onepass::testing::read_text(
      onepass::testing::fixture_model_dir("bert-tiny-nli") / "config.json"));
  config["architectures"] = {"T5EncoderModel"};
  onepass::testing::write_text(dir.path() / "config.json", config.dump());
  try {
    load_encoder(dir.path());
    FAIL() << "unknown architecture accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kUnsupported);
    EXPECT_THAT(e.what(), ::testing::HasSubstr("unsupported architecture T5EncoderModel"));
    for (const char* arch :
         {"BertModel", "BertForSequenceClassification", "XLMRobertaModel",
          "XLMRobertaForSequenceClassification", "RobertaForSequenceClassification",
          "CamembertModel", "CamembertForTokenClassification", "DebertaV2Model",
          "DebertaV2ForSequenceClassification"}) {
      EXPECT_THAT(e.what(), ::testing::HasSubstr(arch));
    }
  }
}

}  // namespace
}  // namespace onepass::model
