// config.json's one parse and the fields every architecture shares: PretrainedConfig's labels
// and problem_type, the encoder sizes under BERT's names, and refusals. The families' own
// defaults and fields: tests/model/config_test.cpp.
#include "weights/config.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "base/error.h"
#include "tests/support/paths.h"

namespace onepass::weights {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

using onepass::testing::fixture_model;

TEST(PretrainedConfig, ReadsBertFixture) {
  auto c = load_pretrained_config(fixture_model("bert-tiny-nli"));
  EXPECT_THAT(c.architectures, ElementsAre("BertForSequenceClassification"));
  EXPECT_EQ(c.model_type, "bert");
  EXPECT_THAT(c.id2label, ElementsAre("contradiction", "entailment", "neutral"));
  EXPECT_EQ(c.num_labels, 3);
  EXPECT_FALSE(c.multi_label());
  read_encoder_sizes(c);
  EXPECT_EQ(c.hidden_size, 64);
  EXPECT_EQ(c.num_hidden_layers, 2);
  EXPECT_EQ(c.num_attention_heads, 4);
  EXPECT_EQ(c.intermediate_size, 128);
  EXPECT_EQ(c.vocab_size, 2600);
  EXPECT_EQ(c.type_vocab_size, 2);
  EXPECT_DOUBLE_EQ(c.layer_norm_eps, 1e-12);
  EXPECT_EQ(c.pad_token_id, 0);
}

TEST(PretrainedConfig, LabelsFromNumLabelsAndProblemType) {
  const auto two = parse_pretrained_config("{}");
  EXPECT_THAT(two.id2label, ElementsAre("LABEL_0", "LABEL_1"));
  const auto one =
      parse_pretrained_config(R"({"num_labels":1,"problem_type":"multi_label_classification"})");
  EXPECT_THAT(one.id2label, ElementsAre("LABEL_0"));
  EXPECT_TRUE(one.multi_label());
}

TEST(PretrainedConfig, NullKeepsTheDefaultButNullPadIsNone) {
  auto c = parse_pretrained_config(R"({"hidden_size":null,"pad_token_id":null})");
  c.pad_token_id = 7;
  read_encoder_sizes(c);
  EXPECT_EQ(c.hidden_size, 768);
  EXPECT_FALSE(c.pad_token_id.has_value());
}

TEST(ConfigFields, ReadsEachTypeAndNamesTheWrongOne) {
  const ConfigFields f(R"({"n":3,"x":0.5,"b":true,"s":"t","l":["a","b"],"bad":"3"})");
  int n = 0;
  double x = 0;
  bool b = false;
  std::string s;
  std::vector<std::string> l;
  f.read("n", n);
  f.read("x", x);
  f.read("b", b);
  f.read("s", s);
  f.read("l", l);
  EXPECT_EQ(n, 3);
  EXPECT_DOUBLE_EQ(x, 0.5);
  EXPECT_TRUE(b);
  EXPECT_EQ(s, "t");
  EXPECT_THAT(l, ElementsAre("a", "b"));
  EXPECT_TRUE(f.holds_string("s"));
  EXPECT_FALSE(f.holds_string("l"));
  try {
    f.read("bad", n);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kInvalidModel);
    EXPECT_THAT(e.what(), HasSubstr("field bad must be an integer"));
  }
}

std::string config_error_text(const std::string& text) {
  try {
    auto c = parse_pretrained_config(text);
    read_encoder_sizes(c);
    validate_encoder_sizes(c);
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kInvalidModel);
    return e.what();
  }
  return "no error";
}

TEST(PretrainedConfig, RefusesBrokenValues) {
  EXPECT_THAT(config_error_text("{"), HasSubstr("not valid JSON"));
  EXPECT_THAT(config_error_text("[]"), HasSubstr("not a JSON object"));
  EXPECT_THAT(config_error_text(R"({"hidden_size":"big"})"),
              HasSubstr("field hidden_size must be an integer"));
  EXPECT_THAT(config_error_text(R"({"hidden_size":100,"num_attention_heads":3})"),
              HasSubstr("not a multiple"));
  EXPECT_THAT(config_error_text(R"({"num_hidden_layers":0})"),
              HasSubstr("num_hidden_layers must be positive"));
  EXPECT_THAT(config_error_text(R"({"id2label":{"0":"a","2":"b"}})"), HasSubstr("id2label keys"));
  EXPECT_THAT(config_error_text(R"({"architectures":"BertModel"})"), HasSubstr("architectures"));
  EXPECT_THAT(config_error_text(R"({"pad_token_id":1e40})"), HasSubstr("pad_token_id"));
  EXPECT_EQ(config_error_text(R"({"hidden_size":64,"num_attention_heads":4})"), "no error");
}

TEST(PretrainedConfig, MissingFileIsNotFound) {
  try {
    load_pretrained_config(std::filesystem::path(ONEPASS_TEST_DATA_DIR) / "no-such-model");
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kNotFound);
    EXPECT_THAT(e.what(), HasSubstr("config.json"));
  }
}

}  // namespace
}  // namespace onepass::weights
