// config.json parsing: the fixtures, transformers' defaults, and refusals.
#include "weights/config.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "base/error.h"

namespace onepass::weights {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

const std::filesystem::path kModels =
    std::filesystem::path(ONEPASS_TEST_DATA_DIR) / "fixtures/models";

TEST(ModelConfig, ReadsBertFixture) {
  const auto c = load_model_config(kModels / "bert-tiny-nli");
  EXPECT_THAT(c.architectures, ElementsAre("BertForSequenceClassification"));
  EXPECT_EQ(c.model_type, "bert");
  EXPECT_EQ(c.hidden_size, 64);
  EXPECT_EQ(c.num_hidden_layers, 2);
  EXPECT_EQ(c.num_attention_heads, 4);
  EXPECT_EQ(c.intermediate_size, 128);
  EXPECT_EQ(c.vocab_size, 2600);
  EXPECT_EQ(c.type_vocab_size, 2);
  EXPECT_DOUBLE_EQ(c.layer_norm_eps, 1e-12);
  EXPECT_THAT(c.id2label, ElementsAre("contradiction", "entailment", "neutral"));
  EXPECT_EQ(c.num_labels, 3);
  EXPECT_EQ(c.pad_token_id, 0);
  EXPECT_FALSE(c.multi_label());
}

TEST(ModelConfig, ReadsDebertaFixtureFields) {
  const auto c = load_model_config(kModels / "deberta-v2-tiny-nli");
  EXPECT_TRUE(c.relative_attention);
  EXPECT_EQ(c.max_relative_positions, -1);
  EXPECT_EQ(c.position_buckets, 32);
  EXPECT_THAT(c.pos_att_type, ElementsAre("p2c", "c2p"));
  EXPECT_TRUE(c.share_att_key);
  EXPECT_EQ(c.norm_rel_ebd, "layer_norm");
  EXPECT_FALSE(c.position_biased_input);
  EXPECT_EQ(c.type_vocab_size, 0);
  EXPECT_EQ(c.conv_kernel_size, 0);  // absent: modeling code's getattr default
  EXPECT_EQ(c.conv_act, "tanh");
  EXPECT_EQ(c.conv_groups, 1);
  EXPECT_EQ(c.pooler_hidden_size, 64);
  EXPECT_EQ(c.pooler_hidden_act, "gelu");
  EXPECT_DOUBLE_EQ(c.layer_norm_eps, 1e-7);
}

TEST(ModelConfig, DefaultsFollowModelType) {
  const auto deberta =
      parse_model_config(R"({"model_type":"deberta-v2","hidden_size":64,"num_attention_heads":4})");
  EXPECT_EQ(deberta.type_vocab_size, 0);
  EXPECT_TRUE(deberta.position_biased_input);
  EXPECT_FALSE(deberta.share_att_key);
  EXPECT_EQ(deberta.position_buckets, -1);
  EXPECT_EQ(deberta.norm_rel_ebd, "none");
  EXPECT_TRUE(deberta.pos_att_type.empty());
  EXPECT_EQ(deberta.pooler_hidden_size, 64);
  EXPECT_DOUBLE_EQ(deberta.layer_norm_eps, 1e-7);
  const auto xlmr = parse_model_config(R"({"model_type":"xlm-roberta"})");
  EXPECT_EQ(xlmr.pad_token_id, 1);
  EXPECT_EQ(xlmr.hidden_size, 768);
  EXPECT_THAT(xlmr.id2label, ElementsAre("LABEL_0", "LABEL_1"));
  const auto one =
      parse_model_config(R"({"num_labels":1,"problem_type":"multi_label_classification"})");
  EXPECT_THAT(one.id2label, ElementsAre("LABEL_0"));
  EXPECT_TRUE(one.multi_label());
}

TEST(ModelConfig, PosAttTypeAsPipeString) {
  const auto c = parse_model_config(R"({"model_type":"deberta-v2","pos_att_type":"c2p|p2c"})");
  EXPECT_THAT(c.pos_att_type, ElementsAre("c2p", "p2c"));
}

std::string config_error(const std::string& text) {
  try {
    parse_model_config(text);
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kInvalidModel);
    return e.what();
  }
  return "no error";
}

TEST(ModelConfig, RefusesBrokenValues) {
  EXPECT_THAT(config_error("{"), HasSubstr("not valid JSON"));
  EXPECT_THAT(config_error("[]"), HasSubstr("not a JSON object"));
  EXPECT_THAT(config_error(R"({"hidden_size":"big"})"),
              HasSubstr("field hidden_size must be an integer"));
  EXPECT_THAT(config_error(R"({"hidden_size":100,"num_attention_heads":3})"),
              HasSubstr("not a multiple"));
  EXPECT_THAT(config_error(R"({"num_hidden_layers":0})"),
              HasSubstr("num_hidden_layers must be positive"));
  EXPECT_THAT(config_error(R"({"id2label":{"0":"a","2":"b"}})"), HasSubstr("id2label keys"));
  EXPECT_THAT(config_error(R"({"architectures":"BertModel"})"), HasSubstr("architectures"));
  EXPECT_THAT(config_error(R"({"relative_attention":1})"),
              HasSubstr("relative_attention must be true or false"));
}

TEST(ModelConfig, MissingFileIsNotFound) {
  try {
    load_model_config(std::filesystem::path(ONEPASS_TEST_DATA_DIR) / "no-such-model");
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kNotFound);
    EXPECT_THAT(e.what(), HasSubstr("config.json"));
  }
}

}  // namespace
}  // namespace onepass::weights
