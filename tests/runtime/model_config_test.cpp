#include "runtime/model_config.h"

#include <gtest/gtest.h>

#include <fstream>

#include "base/error.h"
#include "fakes.h"
#include "temp_dir.h"

namespace onepass::runtime {
namespace {

using testing::fixture_model;

TEST(ModelConfig, NliClassifierWithEntailmentAndContradiction) {
  auto d = describe_model_folder("nli", fixture_model("bert-tiny-nli"), 0, std::nullopt);
  EXPECT_EQ(d.name, "nli");
  EXPECT_EQ(d.task, ModelTask::kClassifier);
  EXPECT_EQ(d.state, ModelState::kUnloaded);
  EXPECT_EQ(d.info.num_labels, 3);
  EXPECT_EQ(d.info.id2label, (std::vector<std::string>{"contradiction", "entailment", "neutral"}));
  EXPECT_EQ(d.entailment_index, 1);
  EXPECT_EQ(d.contradiction_index, 0);
  EXPECT_EQ(d.max_input_length, 512);
  EXPECT_EQ(d.info.vocab_size, 2600);
  EXPECT_EQ(d.info.type_vocab_size, 2);
}

TEST(ModelConfig, XlmrPositionsStartAfterPadding) {
  auto d = describe_model_folder("x", fixture_model("xlmr-tiny-nli"), 0, std::nullopt);
  EXPECT_EQ(d.info.max_tokens, 512);  // 514 - (pad 1 + 1)
  EXPECT_EQ(d.entailment_index, 0);
  EXPECT_EQ(d.contradiction_index, 2);
  auto limited = describe_model_folder("x", fixture_model("xlmr-tiny-nli"), 128, std::nullopt);
  EXPECT_EQ(limited.max_input_length, 128);
  auto wider = describe_model_folder("x", fixture_model("xlmr-tiny-nli"), 4096, std::nullopt);
  EXPECT_EQ(wider.max_input_length, 512);
}

TEST(ModelConfig, RerankerAndEmbedder) {
  auto rerank = describe_model_folder("r", fixture_model("bert-tiny-rerank"), 0, std::nullopt);
  EXPECT_EQ(rerank.task, ModelTask::kReranker);
  EXPECT_EQ(rerank.entailment_index, -1);
  auto embed = describe_model_folder("e", fixture_model("bert-tiny-embed"), 0, std::nullopt);
  EXPECT_EQ(embed.task, ModelTask::kEmbedder);
  EXPECT_EQ(embed.pooling, Pooling::kMean);  // no 1_Pooling folder
  auto cls = describe_model_folder("e", fixture_model("bert-tiny-embed"), 0, Pooling::kCls);
  EXPECT_EQ(cls.pooling, Pooling::kCls);
}

TEST(ModelConfig, PoolingFromSentenceTransformersFolder) {
  testing::TempDir dir;
  std::filesystem::copy_file(fixture_model("bert-tiny-embed") / "config.json",
                             dir.path() / "config.json");
  std::filesystem::create_directory(dir.path() / "1_Pooling");
  std::ofstream(dir.path() / "1_Pooling" / "config.json")
      << R"({"word_embedding_dimension": 64, "pooling_mode_cls_token": true,
             "pooling_mode_mean_tokens": false})";
  EXPECT_EQ(describe_model_folder("e", dir.path(), 0, std::nullopt).pooling, Pooling::kCls);
  EXPECT_EQ(describe_model_folder("e", dir.path(), 0, Pooling::kMean).pooling, Pooling::kMean);
}

TEST(ModelConfig, ProblemTypeAndLabelFallbackComeFromConfigJson) {
  testing::TempDir dir;
  std::ofstream(dir.path() / "config.json")
      << R"({"architectures": ["BertForSequenceClassification"], "model_type": "bert",
             "num_labels": 1, "problem_type": "regression"})";
  const auto d = describe_model_folder("r", dir.path(), 0, std::nullopt);
  EXPECT_EQ(d.info.problem_type, "regression");
  EXPECT_FALSE(d.info.multi_label);
  EXPECT_EQ(d.info.id2label, (std::vector<std::string>{"LABEL_0"}));
  EXPECT_EQ(d.task, ModelTask::kReranker);
  EXPECT_EQ(d.info.hidden_size, 768);  // BertConfig's default
}

TEST(ModelConfig, BrokenFoldersNameTheProblemWithoutThePath) {
  testing::TempDir dir;
  try {
    describe_model_folder("m", dir.path(), 0, std::nullopt);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kNotFound);
    EXPECT_NE(std::string(e.what()).find("config.json"), std::string::npos);
    EXPECT_EQ(std::string(e.what()).find(dir.path().string()), std::string::npos);
  }
  std::ofstream(dir.path() / "config.json") << "{\"architectures\": [\"BertModel\"";
  try {
    describe_model_folder("m", dir.path(), 0, std::nullopt);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kInvalidModel);
  }
  std::ofstream(dir.path() / "config.json")
      << R"({"architectures": ["GPT2LMHeadModel"], "hidden_size": 8, "vocab_size": 10})";
  try {
    describe_model_folder("m", dir.path(), 0, std::nullopt);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kUnsupported);
    EXPECT_NE(std::string(e.what()).find("GPT2LMHeadModel"), std::string::npos);
  }
  try {
    describe_model_folder("m", dir.path() / "missing", 0, std::nullopt);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kNotFound);
  }
}

}  // namespace
}  // namespace onepass::runtime
