#include "runtime/model_config.h"

#include <gtest/gtest.h>

#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>

#include "base/error.h"
#include "fakes.h"
#include "model/heads/dense_module.h"
#include "tests/support/temp_dir.h"

namespace onepass::runtime {
namespace {

using onepass::testing::TempDir;
using testing::fixture_model;

FolderOptions limit(std::size_t tokens) {
  FolderOptions options;
  options.max_input_length = tokens;
  return options;
}

FolderOptions pooling(Pooling p) {
  FolderOptions options;
  options.pooling = p;
  return options;
}

// A copy of bert-tiny-embed's config.json (512 positions) with sentence-transformers' files.
struct SentenceFolder {
  TempDir dir;
  SentenceFolder() {
    std::filesystem::copy_file(fixture_model("bert-tiny-embed") / "config.json",
                               dir.path() / "config.json");
  }
  void write(const std::string& name, const std::string& text) {
    std::filesystem::create_directories((dir.path() / name).parent_path());
    std::ofstream(dir.path() / name) << text;
  }
  ModelDescription describe(const FolderOptions& options = {}) {
    return describe_model_folder("st", dir.path(), options);
  }
};

ErrorKind error_kind_of(const std::function<void()>& f, std::string* message = nullptr) {
  try {
    f();
  } catch (const Error& e) {
    if (message) *message = e.what();
    return e.kind();
  }
  ADD_FAILURE() << "no error";
  return ErrorKind::kInternal;
}

TEST(ModelConfig, NliClassifierWithEntailmentAndContradiction) {
  auto d = describe_model_folder("nli", fixture_model("bert-tiny-nli"));
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
  auto d = describe_model_folder("x", fixture_model("xlmr-tiny-nli"));
  EXPECT_EQ(d.info.max_tokens, 512);  // 514 - (pad 1 + 1)
  EXPECT_EQ(d.entailment_index, 0);
  EXPECT_EQ(d.contradiction_index, 2);
  auto limited = describe_model_folder("x", fixture_model("xlmr-tiny-nli"), limit(128));
  EXPECT_EQ(limited.max_input_length, 128);
  auto wider = describe_model_folder("x", fixture_model("xlmr-tiny-nli"), limit(4096));
  EXPECT_EQ(wider.max_input_length, 512);
}

TEST(ModelConfig, RerankerAndEmbedder) {
  auto rerank = describe_model_folder("r", fixture_model("bert-tiny-rerank"));
  EXPECT_EQ(rerank.task, ModelTask::kReranker);
  EXPECT_EQ(rerank.entailment_index, -1);
  auto embed = describe_model_folder("e", fixture_model("bert-tiny-embed"));
  EXPECT_EQ(embed.task, ModelTask::kEmbedder);
  EXPECT_EQ(embed.pooling, Pooling::kMean);  // no 1_Pooling folder
  auto cls = describe_model_folder("e", fixture_model("bert-tiny-embed"), pooling(Pooling::kCls));
  EXPECT_EQ(cls.pooling, Pooling::kCls);
}

TEST(ModelConfig, PoolingFromSentenceTransformersFolder) {
  TempDir dir;
  std::filesystem::copy_file(fixture_model("bert-tiny-embed") / "config.json",
                             dir.path() / "config.json");
  std::filesystem::create_directory(dir.path() / "1_Pooling");
  std::ofstream(dir.path() / "1_Pooling" / "config.json")
      << R"({"word_embedding_dimension": 64, "pooling_mode_cls_token": true,
             "pooling_mode_mean_tokens": false})";
  EXPECT_EQ(describe_model_folder("e", dir.path()).pooling, Pooling::kCls);
  EXPECT_EQ(describe_model_folder("e", dir.path(), pooling(Pooling::kMean)).pooling,
            Pooling::kMean);
}

TEST(ModelConfig, SentenceTransformersMaxSeqLengthCapsTheInputLength) {
  SentenceFolder folder;
  EXPECT_EQ(folder.describe().max_input_length, 512);
  EXPECT_EQ(folder.describe().max_seq_length, 0);
  folder.write("sentence_bert_config.json", R"({"max_seq_length": 256, "do_lower_case": false})");
  auto d = folder.describe();
  EXPECT_EQ(d.max_seq_length, 256);
  EXPECT_EQ(d.max_input_length, 256);
  EXPECT_EQ(folder.describe(limit(128)).max_input_length, 128);  // the server's flag, lower
  // More than the positions allow (a config written for another model): the positions win.
  folder.write("sentence_bert_config.json", R"({"max_seq_length": 4096})");
  EXPECT_EQ(folder.describe().max_input_length, 512);
  folder.write("sentence_bert_config.json", R"({"max_seq_length": null})");
  EXPECT_EQ(folder.describe().max_input_length, 512);
  folder.write("sentence_bert_config.json", R"({"max_seq_length": "long"})");
  std::string message;
  EXPECT_EQ(error_kind_of([&] { folder.describe(); }, &message), ErrorKind::kInvalidModel);
  EXPECT_NE(message.find("sentence_bert_config.json"), std::string::npos) << message;
  EXPECT_EQ(message.find(folder.dir.path().string()), std::string::npos) << message;
}

TEST(ModelConfig, OlderSentenceTransformersConfigNamesAreRead) {
  SentenceFolder folder;
  folder.write("sentence_xlm-roberta_config.json", R"({"max_seq_length": 128})");
  EXPECT_EQ(folder.describe().max_input_length, 128);
  // The current name comes first.
  folder.write("sentence_bert_config.json", R"({"max_seq_length": 200})");
  EXPECT_EQ(folder.describe().max_input_length, 200);
}

TEST(ModelConfig, PromptsAndTheDefaultPrompt) {
  SentenceFolder folder;
  folder.write("config_sentence_transformers.json",
               R"({"prompts": {"query": "query: ", "passage": "passage: "},
                   "default_prompt_name": null, "similarity_fn_name": "cosine"})");
  auto d = folder.describe();
  EXPECT_EQ(d.prompts,
            (std::map<std::string, std::string>{{"passage", "passage: "}, {"query", "query: "}}));
  EXPECT_FALSE(d.default_prompt.has_value());

  FolderOptions by_name;
  by_name.default_prompt_name = "query";
  d = folder.describe(by_name);
  EXPECT_EQ(d.default_prompt, "query: ");
  EXPECT_EQ(d.default_prompt_name, "query");
  by_name.default_prompt_name = "document";
  std::string message;
  EXPECT_EQ(error_kind_of([&] { folder.describe(by_name); }, &message),
            ErrorKind::kInvalidArgument);
  EXPECT_NE(message.find("'document'"), std::string::npos) << message;
  EXPECT_NE(message.find("'passage' 'query'"), std::string::npos) << message;

  // The folder's own default_prompt_name applies unless the server names another or gives text.
  folder.write("config_sentence_transformers.json",
               R"({"prompts": {"query": "query: ", "passage": "passage: "},
                   "default_prompt_name": "passage"})");
  EXPECT_EQ(folder.describe().default_prompt, "passage: ");
  by_name.default_prompt_name = "query";
  EXPECT_EQ(folder.describe(by_name).default_prompt, "query: ");
  FolderOptions by_text;
  by_text.default_prompt = "";
  d = folder.describe(by_text);
  EXPECT_EQ(d.default_prompt, "");
  EXPECT_EQ(d.default_prompt_name, "");

  folder.write("config_sentence_transformers.json",
               R"({"prompts": {"query": "query: "}, "default_prompt_name": "passage"})");
  EXPECT_EQ(error_kind_of([&] { folder.describe(); }, &message), ErrorKind::kInvalidModel);
  EXPECT_NE(message.find("default_prompt_name 'passage'"), std::string::npos) << message;
  folder.write("config_sentence_transformers.json", R"({"prompts": {"query": 3}})");
  EXPECT_EQ(error_kind_of([&] { folder.describe(); }), ErrorKind::kInvalidModel);
  folder.write("config_sentence_transformers.json", R"(["query"])");
  EXPECT_EQ(error_kind_of([&] { folder.describe(); }), ErrorKind::kInvalidModel);
}

TEST(ModelConfig, ANormalizeModuleMakesUnitVectors) {
  SentenceFolder folder;
  EXPECT_FALSE(folder.describe().normalizes);
  const std::string transformer_and_pooling =
      R"({"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"},
         {"idx": 1, "name": "1", "path": "1_Pooling", "type": "sentence_transformers.models.Pooling"})";
  folder.write("modules.json", "[" + transformer_and_pooling + "]");
  EXPECT_FALSE(folder.describe().normalizes);
  folder.write("modules.json", "[" + transformer_and_pooling +
                                   R"(, {"idx": 2, "name": "2", "path": "2_Normalize",
                                         "type": "sentence_transformers.models.Normalize"}])");
  EXPECT_TRUE(folder.describe().normalizes);
  folder.write("modules.json", R"({"0": "Transformer"})");
  std::string message;
  EXPECT_EQ(error_kind_of([&] { folder.describe(); }, &message), ErrorKind::kInvalidModel);
  EXPECT_NE(message.find("modules.json"), std::string::npos) << message;
}

TEST(ModelConfig, DenseModulesComeFromModulesJson) {
  const auto d = describe_model_folder("dense", fixture_model("bert-tiny-st-dense"));
  EXPECT_EQ(d.task, ModelTask::kEmbedder);
  EXPECT_EQ(d.pooling, Pooling::kCls);
  EXPECT_TRUE(d.normalizes);
  ASSERT_EQ(d.dense_modules.size(), 2u);
  EXPECT_EQ(d.dense_modules[0].path, "2_Dense");
  EXPECT_EQ(d.dense_modules[0].in_features, 64);
  EXPECT_EQ(d.dense_modules[0].out_features, 48);
  EXPECT_TRUE(d.dense_modules[0].bias);
  EXPECT_EQ(d.dense_modules[0].activation, model::heads::Activation::kTanh);
  EXPECT_EQ(d.dense_modules[1].path, "3_Dense");
  EXPECT_EQ(d.dense_modules[1].out_features, 24);
  EXPECT_FALSE(d.dense_modules[1].bias);
  EXPECT_EQ(d.dense_modules[1].activation, model::heads::Activation::kIdentity);
  EXPECT_EQ(embedding_size(d), 24);
  EXPECT_EQ(embedding_size(describe_model_folder("st", fixture_model("bert-tiny-st-embed"))), 64);
}

// modules.json's Transformer and Pooling, then `rest` (JSON objects, comma-separated).
std::string modules_then(const std::string& rest) {
  return R"([{"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"},
             {"idx": 1, "name": "1", "path": "1_Pooling", "type": "sentence_transformers.models.Pooling"})" +
         (rest.empty() ? "" : ", " + rest) + "]";
}

std::string module(const std::string& path, const std::string& type) {
  return R"({"idx": 2, "name": "2", "path": ")" + path +
         R"(", "type": "sentence_transformers.models.)" + type + R"("})";
}

TEST(ModelConfig, ADenseModuleIsReadOrRefusedByName) {
  SentenceFolder folder;  // hidden size 64
  auto refused = [&](ErrorKind kind, const std::string& needle) {
    std::string message;
    EXPECT_EQ(error_kind_of([&] { folder.describe(); }, &message), kind) << message;
    EXPECT_NE(message.find(needle), std::string::npos) << message;
    EXPECT_EQ(message.find(folder.dir.path().string()), std::string::npos) << message;
  };
  folder.write("modules.json", modules_then(module("2_Dense", "Dense")));
  refused(ErrorKind::kInvalidModel, "2_Dense/config.json");
  const std::string tanh = R"("activation_function": "torch.nn.modules.activation.Tanh")";
  folder.write("2_Dense/config.json", R"({"in_features": 64, "out_features": 16, )" + tanh + "}");
  auto d = folder.describe();
  ASSERT_EQ(d.dense_modules.size(), 1u);
  EXPECT_TRUE(d.dense_modules[0].bias);  // Dense's default
  EXPECT_EQ(embedding_size(d), 16);
  folder.write("2_Dense/config.json", R"({"in_features": 32, "out_features": 16, )" + tanh + "}");
  refused(ErrorKind::kInvalidModel, "in_features 32");
  folder.write("2_Dense/config.json", R"({"in_features": 64, "out_features": 0, )" + tanh + "}");
  refused(ErrorKind::kInvalidModel, "out_features");
  folder.write("2_Dense/config.json", R"({"in_features": 64, "out_features": 16})");
  refused(ErrorKind::kInvalidModel, "activation_function");
  folder.write("2_Dense/config.json",
               R"({"in_features": 64, "out_features": 16,
                   "activation_function": "torch.nn.modules.activation.ReLU"})");
  refused(ErrorKind::kUnsupported, "torch.nn.modules.activation.ReLU");
  folder.write("modules.json", modules_then(module("../2_Dense", "Dense")));
  refused(ErrorKind::kInvalidModel, "inside the model folder");
}

TEST(ModelConfig, DenseModulesLoadTheirWeightsAndRunTheLibrarysPipeline) {
  TempDir dir;
  std::filesystem::copy(fixture_model("bert-tiny-st-dense"), dir.path(),
                        std::filesystem::copy_options::recursive);
  const auto d = describe_model_folder("dense", dir.path());
  std::ifstream in(dir.path() / "golden.json");
  const auto golden = nlohmann::json::parse(in);
  // The golden's CLS vector through both modules: sentence-transformers' vector before Normalize.
  for (const auto& c : golden["cases"]) {
    std::vector<float> v = c["embedding"]["cls"].get<std::vector<float>>();
    for (const auto& config : d.dense_modules)
      v = model::heads::DenseModule::load(dir.path(), config).apply(v);
    const auto expected = c["sentence_transformers"]["before_normalize"].get<std::vector<float>>();
    ASSERT_EQ(v.size(), expected.size());
    for (std::size_t i = 0; i < v.size(); ++i) EXPECT_NEAR(v[i], expected[i], 1e-4) << i;
  }
  auto load_error = [&](std::size_t index, std::string* message) {
    return error_kind_of(
        [&] { model::heads::DenseModule::load(dir.path(), d.dense_modules[index]); }, message);
  };
  std::string message;
  auto wider = d.dense_modules[0];
  wider.out_features = 40;
  EXPECT_EQ(error_kind_of([&] { model::heads::DenseModule::load(dir.path(), wider); }, &message),
            ErrorKind::kInvalidModel);
  EXPECT_NE(message.find("2_Dense"), std::string::npos) << message;
  EXPECT_NE(message.find("linear.weight"), std::string::npos) << message;
  std::filesystem::remove(dir.path() / "3_Dense" / "pytorch_model.bin");
  EXPECT_EQ(load_error(1, &message), ErrorKind::kNotFound);
  EXPECT_NE(message.find("3_Dense"), std::string::npos) << message;
}

TEST(ModelConfig, ModulesOnepassDoesNotRunFailAnEmbedderOnly) {
  SentenceFolder folder;
  folder.write("modules.json", modules_then(module("2_LSTM", "LSTM")));
  std::string message;
  EXPECT_EQ(error_kind_of([&] { folder.describe(); }, &message), ErrorKind::kUnsupported);
  EXPECT_NE(message.find("sentence_transformers.models.LSTM"), std::string::npos) << message;
  // Anything after Normalize, a Dense module included.
  folder.write("2_Dense/config.json", R"({"in_features": 64, "out_features": 16,
      "activation_function": "torch.nn.modules.linear.Identity"})");
  folder.write("modules.json", modules_then(module("2_Normalize", "Normalize") + ", " +
                                            module("2_Dense", "Dense")));
  EXPECT_EQ(error_kind_of([&] { folder.describe(); }, &message), ErrorKind::kUnsupported);
  EXPECT_NE(message.find("Dense after Normalize"), std::string::npos) << message;
  // Dropout does nothing at inference; a remote-code repo names its own Transformer class.
  folder.write(
      "modules.json",
      modules_then(module("2_Dropout", "Dropout") +
                   R"(, {"idx": 3, "name": "3", "path": "", "type": "custom_st.Transformer"})"));
  EXPECT_TRUE(folder.describe().dense_modules.empty());
  // A classifier's folder keeps serving logits whatever its modules.json says.
  TempDir nli;
  std::filesystem::copy_file(fixture_model("bert-tiny-nli") / "config.json",
                             nli.path() / "config.json");
  std::ofstream(nli.path() / "modules.json") << modules_then(module("2_LSTM", "LSTM"));
  EXPECT_EQ(describe_model_folder("nli", nli.path()).task, ModelTask::kClassifier);
}

TEST(ModelConfig, ACrossEncodersActivationComesFromConfigJson) {
  using model::heads::Activation;
  auto describe_with = [&](const std::string& model, const nlohmann::json& extra) {
    TempDir dir;
    std::ifstream in(fixture_model(model) / "config.json");
    auto config = nlohmann::json::parse(in);
    config.update(extra);
    std::ofstream(dir.path() / "config.json") << config.dump();
    return describe_model_folder("m", dir.path());
  };
  EXPECT_EQ(describe_with("bert-tiny-rerank", nlohmann::json::object()).cross_encoder_activation,
            Activation::kSigmoid);
  EXPECT_EQ(describe_with("bert-tiny-rerank", {{"sbert_ce_default_activation_function",
                                                "torch.nn.modules.linear.Identity"}})
                .cross_encoder_activation,
            Activation::kIdentity);
  // The v4 key wins over the older one, as in sentence-transformers and vLLM.
  EXPECT_EQ(
      describe_with(
          "bert-tiny-rerank",
          {{"sbert_ce_default_activation_function", "torch.nn.modules.linear.Identity"},
           {"sentence_transformers", {{"activation_fn", "torch.nn.modules.activation.Tanh"}}}})
          .cross_encoder_activation,
      Activation::kTanh);
  const nlohmann::json relu = {
      {"sbert_ce_default_activation_function", "torch.nn.modules.activation.ReLU"}};
  std::string message;
  EXPECT_EQ(error_kind_of([&] { describe_with("bert-tiny-rerank", relu); }, &message),
            ErrorKind::kUnsupported);
  EXPECT_NE(message.find("torch.nn.modules.activation.ReLU"), std::string::npos) << message;
  // Only a reranker's score reads it.
  EXPECT_EQ(describe_with("bert-tiny-nli", relu).task, ModelTask::kClassifier);
  EXPECT_EQ(error_kind_of([&] {
              describe_with("bert-tiny-rerank", {{"sentence_transformers", "v4"}});
            }),
            ErrorKind::kInvalidModel);
}

TEST(ModelConfig, PromptsBelongToEmbeddersOnly) {
  TempDir dir;
  std::filesystem::copy_file(fixture_model("bert-tiny-nli") / "config.json",
                             dir.path() / "config.json");
  std::ofstream(dir.path() / "config_sentence_transformers.json")
      << R"({"prompts": {"query": "query: "}, "default_prompt_name": "query"})";
  const auto d = describe_model_folder("nli", dir.path());
  EXPECT_TRUE(d.prompts.empty());
  EXPECT_FALSE(d.default_prompt.has_value());
}

TEST(ModelConfig, ProblemTypeAndLabelFallbackComeFromConfigJson) {
  TempDir dir;
  std::ofstream(dir.path() / "config.json")
      << R"({"architectures": ["BertForSequenceClassification"], "model_type": "bert",
             "num_labels": 1, "problem_type": "regression"})";
  const auto d = describe_model_folder("r", dir.path());
  EXPECT_EQ(d.info.problem_type, "regression");
  EXPECT_FALSE(d.info.multi_label);
  EXPECT_EQ(d.info.id2label, (std::vector<std::string>{"LABEL_0"}));
  EXPECT_EQ(d.task, ModelTask::kReranker);
  EXPECT_EQ(d.info.hidden_size, 768);  // BertConfig's default
}

TEST(ModelConfig, BrokenFoldersNameTheProblemWithoutThePath) {
  TempDir dir;
  try {
    describe_model_folder("m", dir.path());
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kNotFound);
    EXPECT_NE(std::string(e.what()).find("config.json"), std::string::npos);
    EXPECT_EQ(std::string(e.what()).find(dir.path().string()), std::string::npos);
  }
  std::ofstream(dir.path() / "config.json") << "{\"architectures\": [\"BertModel\"";
  try {
    describe_model_folder("m", dir.path());
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kInvalidModel);
  }
  std::ofstream(dir.path() / "config.json")
      << R"({"architectures": ["GPT2LMHeadModel"], "hidden_size": 8, "vocab_size": 10})";
  try {
    describe_model_folder("m", dir.path());
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kUnsupported);
    EXPECT_NE(std::string(e.what()).find("GPT2LMHeadModel"), std::string::npos);
  }
  try {
    describe_model_folder("m", dir.path() / "missing");
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kNotFound);
  }
}

}  // namespace
}  // namespace onepass::runtime
