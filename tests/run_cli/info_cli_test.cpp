// `onepass info` through the real binary on fixture folders: what it says must match the
// folder's config.json (architecture, labels in id order, entailment index, position limit) and
// the weight files, and an unsupported architecture must exit 2 naming the supported ones.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "tests/support/cli_runner.h"
#include "tests/support/files.h"
#include "tests/support/temp_dir.h"

namespace onepass {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using ::testing::Contains;
using ::testing::HasSubstr;
using testing::read_text;
using testing::run_onepass;
using testing::TempDir;

const fs::path kData = fs::path(ONEPASS_TEST_DATA_DIR);
const fs::path kModels = kData / "fixtures/models";

json config_of(const fs::path& dir) { return json::parse(read_text(dir / "config.json")); }

class InfoCli : public ::testing::Test {
 protected:
  InfoCli() : work_("info_cli") {}

  testing::CliResult info(const std::vector<std::string>& args) {
    std::vector<std::string> all{"info"};
    all.insert(all.end(), args.begin(), args.end());
    return run_onepass(all);
  }
  json info_json(const fs::path& dir, int expected_exit = 0) {
    const auto r = info({dir.string(), "--json"});
    EXPECT_EQ(r.exit_code, expected_exit) << r.err << r.out;
    return json::parse(r.out);
  }
  // A copy of a fixture folder (its files, not its goldens) to break or extend.
  fs::path copy_fixture(const std::string& name) {
    const auto dir = work_.path() / name;
    fs::create_directories(dir);
    for (const auto& f : fs::directory_iterator(kModels / name)) {
      const auto file = f.path().filename().string();
      if (file == "golden.json" || file == "tokenizer_cases.json" || file == "model.onnx") continue;
      fs::copy_file(f.path(), dir / file);
    }
    return dir;
  }

  TempDir work_;
};

TEST_F(InfoCli, NliModelMatchesConfigJson) {
  const auto dir = kModels / "bert-tiny-nli";
  const auto config = config_of(dir);
  const auto r = info_json(dir);
  EXPECT_TRUE(r["loads"].get<bool>());
  EXPECT_TRUE(r["problems"].empty());
  EXPECT_EQ(r["architecture"], config["architectures"][0]);
  EXPECT_EQ(r["model_type"], config["model_type"]);
  EXPECT_EQ(r["task"], "classifier");
  // Labels in id order, from id2label's "0", "1", ... keys.
  const auto& id2label = config["id2label"];
  ASSERT_EQ(r["labels"].size(), id2label.size());
  int entailment = -1;
  for (std::size_t i = 0; i < id2label.size(); ++i) {
    const auto label = id2label[std::to_string(i)].get<std::string>();
    EXPECT_EQ(r["labels"][i], label);
    if (entailment < 0 && label.rfind("entail", 0) == 0) entailment = static_cast<int>(i);
  }
  ASSERT_GE(entailment, 0);
  EXPECT_EQ(r["entailment_index"], entailment);
  EXPECT_TRUE(r["zero_shot"].get<bool>());
  EXPECT_EQ(r["max_input_length"], config["max_position_embeddings"]);
  EXPECT_EQ(r["weight_format"], "safetensors");
  EXPECT_EQ(r["weight_files"], json::array({"model.safetensors"}));
  EXPECT_EQ(r["weight_bytes"], fs::file_size(dir / "model.safetensors"));
  EXPECT_EQ(r["weight_dtype"], "F32");
  // Every float of the file is a parameter: F32 bytes = 4 x count, within the header's size.
  const auto params = r["parameter_count"].get<std::int64_t>();
  EXPECT_GT(params, 100000);
  EXPECT_LT(4 * params, static_cast<std::int64_t>(fs::file_size(dir / "model.safetensors")));
  EXPECT_EQ(r["memory_bytes"]["fp32"], 4 * params);
  EXPECT_LT(r["memory_bytes"]["bf16"].get<std::int64_t>(), 4 * params);
  EXPECT_LT(r["memory_bytes"]["int8"].get<std::int64_t>(),
            r["memory_bytes"]["bf16"].get<std::int64_t>());
  EXPECT_THAT(r["memory_estimate"].get<std::string>(), HasSubstr("weights only"));
  EXPECT_EQ(r["tokenizer"], "tokenizer.json");
  EXPECT_EQ(r["tokenizer_files"][0], "tokenizer.json");
  EXPECT_FALSE(r.contains("precision_check"));
}

TEST_F(InfoCli, TextSaysWhatItServes) {
  const auto r = info({(kModels / "bert-tiny-nli").string()});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("loads: yes"));
  EXPECT_THAT(r.out, HasSubstr("architecture: BertForSequenceClassification"));
  EXPECT_THAT(r.out, HasSubstr("task: classifier (zero-shot: entailment label"));
  EXPECT_THAT(r.out, HasSubstr("max input length: 512 tokens"));
  EXPECT_THAT(r.out, HasSubstr("memory, estimated: fp32 "));
}

TEST_F(InfoCli, SentenceTransformersFolderLimitAndPrompts) {
  const auto r = info_json(kModels / "bert-tiny-st-embed");
  EXPECT_EQ(r["pooling"], "mean");  // its 1_Pooling/config.json
  EXPECT_EQ(r["max_input_length"], 32);
  EXPECT_EQ(r["max_seq_length"], 32);
  EXPECT_EQ(r["prompts"], (json{{"passage", "passage: "}, {"query", "query: "}}));
  EXPECT_FALSE(r.contains("default_prompt"));
  const auto text = info({(kModels / "bert-tiny-st-embed").string()});
  EXPECT_THAT(text.out,
              HasSubstr("max input length: 32 tokens (sentence-transformers max_seq_length 32)"));
  EXPECT_THAT(text.out, HasSubstr("prompts: passage \"passage: \"; query \"query: \";"));
}

TEST_F(InfoCli, DenseModulesAndTheEmbeddingsWidth) {
  const auto r = info_json(kModels / "bert-tiny-st-dense");
  EXPECT_EQ(r["embedding_size"], 24);
  EXPECT_EQ(r["normalizes"], true);
  ASSERT_EQ(r["dense_modules"].size(), 2u);
  EXPECT_EQ(r["dense_modules"][0], (json{{"path", "2_Dense"},
                                         {"in_features", 64},
                                         {"out_features", 48},
                                         {"bias", true},
                                         {"activation", "tanh"}}));
  EXPECT_EQ(r["dense_modules"][1]["activation"], "identity");
  EXPECT_EQ(info_json(kModels / "bert-tiny-st-embed")["embedding_size"], 64);
  const auto text = info({(kModels / "bert-tiny-st-dense").string()});
  EXPECT_THAT(text.out, HasSubstr("embedding: 24 values (sentence-transformers Dense modules "
                                  "2_Dense 64 -> 48 tanh, 3_Dense 48 -> 24 identity), normalised"));
  // A reranker says what CrossEncoder scores are.
  EXPECT_EQ(info_json(kModels / "bert-tiny-rerank")["cross_encoder_activation"], "sigmoid");
}

// Given together, the two default-prompt flags are a usage error before anything loads.
TEST_F(InfoCli, ServeRefusesBothDefaultPromptFlags) {
  const auto r =
      run_onepass({"serve", "--model", (kModels / "bert-tiny-st-embed").string(), "--port", "0",
                   "--default-prompt-name", "query", "--default-prompt", "x: "});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_THAT(r.err, HasSubstr("--default-prompt"));
}

TEST_F(InfoCli, EmbeddingModelPooling) {
  const auto dir = copy_fixture("bert-tiny-embed");
  auto r = info_json(dir);
  EXPECT_EQ(r["task"], "embedder");
  EXPECT_EQ(r["pooling"], "mean");  // no 1_Pooling/config.json: the runtime's default
  EXPECT_TRUE(r["labels"].empty());
  EXPECT_FALSE(r["zero_shot"].get<bool>());

  fs::create_directories(dir / "1_Pooling");
  testing::write_text(dir / "1_Pooling/config.json",
                      R"({"word_embedding_dimension": 64, "pooling_mode_cls_token": true,)"
                      R"( "pooling_mode_mean_tokens": false})");
  r = info_json(dir);
  EXPECT_EQ(r["pooling"], "cls");
  EXPECT_TRUE(r["loads"].get<bool>());
}

TEST_F(InfoCli, UnsupportedArchitectureExits2NamingTheSupportedOnes) {
  const auto dir = copy_fixture("bert-tiny-nli");
  auto config = config_of(dir);
  config["architectures"] = json::array({"GPT2LMHeadModel"});
  testing::write_text(dir / "config.json", config.dump(2));

  const auto text = info({dir.string()});
  EXPECT_EQ(text.exit_code, 2);
  EXPECT_THAT(text.out, HasSubstr("loads: no"));
  EXPECT_THAT(text.out, HasSubstr("unsupported architecture GPT2LMHeadModel"));
  for (const char* arch : {"BertForSequenceClassification", "XLMRobertaForSequenceClassification",
                           "DebertaV2ForSequenceClassification", "DistilBertModel"}) {
    EXPECT_THAT(text.out, HasSubstr(arch));
  }

  const auto r = info_json(dir, 2);
  EXPECT_FALSE(r["loads"].get<bool>());
  EXPECT_EQ(r["architecture"], "GPT2LMHeadModel");
  EXPECT_THAT(r["problems"][0].get<std::string>(),
              HasSubstr("unsupported architecture GPT2LMHeadModel"));
  EXPECT_THAT(r["supported_architectures"].get<std::vector<std::string>>(),
              ::testing::Contains("DebertaV2ForSequenceClassification"));
}

TEST_F(InfoCli, PytorchBinOnlyFolder) {
  const auto dir = copy_fixture("bert-tiny-nli");
  const auto from_safetensors = info_json(dir);
  fs::remove(dir / "model.safetensors");
  fs::copy_file(kData / "torch_bin/bert-tiny-nli/pytorch_model.bin", dir / "pytorch_model.bin");
  const auto r = info_json(dir);
  EXPECT_TRUE(r["loads"].get<bool>()) << r.dump();
  EXPECT_EQ(r["weight_format"], "pytorch");
  EXPECT_EQ(r["weight_files"], json::array({"pytorch_model.bin"}));
  EXPECT_EQ(r["parameter_count"], from_safetensors["parameter_count"]);
  EXPECT_EQ(r["memory_bytes"], from_safetensors["memory_bytes"]);
}

TEST_F(InfoCli, BrokenWeightsExit2WithTheReason) {
  const auto dir = copy_fixture("bert-tiny-nli");
  fs::remove(dir / "model.safetensors");
  fs::copy_file(kData / "torch_bin/evil_system.bin", dir / "pytorch_model.bin");
  const auto r = info_json(dir, 2);
  EXPECT_FALSE(r["loads"].get<bool>());
  EXPECT_THAT(r["problems"].dump(), HasSubstr("pickle global posix.system is not allowed"));
}

TEST_F(InfoCli, CheckRunsThePrecisionGate) {
  const auto r = info({(kModels / "bert-tiny-nli").string(), "--json", "--check"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto checks = json::parse(r.out)["precision_check"];
  ASSERT_EQ(checks.size(), 2u);
  EXPECT_EQ(checks[0]["precision"], "bf16");
  EXPECT_EQ(checks[1]["precision"], "int8");
  for (const auto& c : checks) {
    if (c.contains("skipped")) {  // bf16 needs AVX512_BF16 or AMX; the message names it
      EXPECT_EQ(c["precision"], "bf16");
      continue;
    }
    EXPECT_GT(c["examples"].get<int>(), 10);
    EXPECT_GE(c["label_agreement"].get<double>(), 0.0);
    EXPECT_EQ(c["pass"].get<bool>(), c["failures"].empty());
  }
  EXPECT_FALSE(checks[1].contains("skipped"));  // int8 runs on every CPU
}

TEST_F(InfoCli, WithoutAModelListsTheBuild) {
  const auto r = info({});
  EXPECT_EQ(r.exit_code, 0);
  for (const char* arch :
       {"BertModel", "XLMRobertaForSequenceClassification", "DebertaV2Model",
        "DistilBertForSequenceClassification", "CamembertForTokenClassification"}) {
    EXPECT_THAT(r.out, HasSubstr(arch));
  }
  EXPECT_THAT(r.out, HasSubstr("pytorch_model.bin"));
}

// Sets an environment variable for the binaries run while it lives, then restores it.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    ::setenv(name, value, 1);
  }
  ~ScopedEnv() {
    if (old_) {
      ::setenv(name_, old_->c_str(), 1);
    } else {
      ::unsetenv(name_);
    }
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  const char* name_;
  std::optional<std::string> old_;
};

// Without a model, info names the code this build runs here (kernels/dispatch.h): the baseline's
// -march, the instruction sets the kernels were compiled for besides it, and what each kernel
// family and Linear precision chose on this CPU; the text says what the JSON says.
TEST_F(InfoCli, WithoutAModelNamesTheCodePathsChosenOnThisCpu) {
  const auto r = info({"--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto b = json::parse(r.out);
  const auto& build = b["build"];
  const auto& paths = b["code_paths"];
  const std::vector<std::string> isas{"avx512_bf16", "avx512", "avx2", "scalar"};
  EXPECT_THAT(isas, Contains(build["baseline"].get<std::string>()));
  EXPECT_THAT(isas, Contains(paths["cpu"].get<std::string>()));
  for (const char* family : {"elementwise", "small_gemm", "quantize"})
    EXPECT_THAT(isas, Contains(paths[family].get<std::string>())) << family;
  EXPECT_THAT((std::vector<std::string>{"avx512_bf16", "none"}),
              Contains(paths["bf16_products"].get<std::string>()));
  EXPECT_THAT((std::vector<std::string>{"stream_gemm", "packed_gemm", "onednn"}),
              Contains(paths["fp32_gemm"].get<std::string>()));
  EXPECT_THAT((std::vector<std::string>{"onednn", "unsupported"}),
              Contains(paths["bf16_gemm"].get<std::string>()));
  EXPECT_THAT(
      (std::vector<std::string>{"onednn_vnni", "onednn_avx2_vnni", "packed_gemm", "onednn"}),
      Contains(paths["int8_gemm"].get<std::string>()));
  // A portable build keeps AVX-512 apart; on an AVX-512 CPU any build then runs it.
  if (build["baseline"] == "avx2") {
    EXPECT_THAT(build["dispatched"], Contains("avx512"));
  }
  if (paths["cpu"] == "avx512" || paths["cpu"] == "avx512_bf16") {
    EXPECT_EQ(paths["elementwise"], "avx512");
    EXPECT_EQ(paths["small_gemm"], "avx512");
    EXPECT_EQ(paths["fp32_gemm"], "stream_gemm");
  }
  if (paths["cpu"] == "avx512_bf16") {
    EXPECT_EQ(paths["bf16_products"], "avx512_bf16");
  }

  const auto text = info({});
  ASSERT_EQ(text.exit_code, 0) << text.err;
  const auto march = build["march"].get<std::string>();
  EXPECT_THAT(text.out, HasSubstr("build: " + (march.empty() ? std::string("the compiler's")
                                                             : "-march=" + march)));
  EXPECT_THAT(text.out, HasSubstr("this CPU: " + paths["cpu"].get<std::string>() + "\n"));
  for (const auto& [key, label] :
       std::vector<std::pair<std::string, std::string>>{{"elementwise", "elementwise"},
                                                        {"small_gemm", "small_gemm"},
                                                        {"bf16_products", "bf16 products"},
                                                        {"quantize", "quantize"},
                                                        {"fp32_gemm", "fp32 GEMM"},
                                                        {"bf16_gemm", "bf16 GEMM"},
                                                        {"int8_gemm", "int8 GEMM"}}) {
    EXPECT_THAT(text.out, HasSubstr("  " + label + ": " + paths[key].get<std::string>() + " ("));
  }
}

// ONEDNN_MAX_CPU_ISA=AVX2 runs what a CPU without AVX-512 runs (kernels/matmul.h): fp32 and int8
// Linear products on packed_gemm, no bf16, and in a portable build the AVX2 compilation of every
// dispatched kernel. What the baseline itself was compiled for stays.
TEST_F(InfoCli, OnednnHeldToAvx2KeepsTheBuildOffAvx512) {
  const auto plain = json::parse(info({"--json"}).out);
  if (plain["build"]["baseline"] == "scalar") GTEST_SKIP() << "built without AVX2";
  json held;
  {
    const ScopedEnv avx2("ONEDNN_MAX_CPU_ISA", "AVX2");
    const auto r = info({"--json"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    held = json::parse(r.out);
  }
  const auto& paths = held["code_paths"];
  EXPECT_EQ(paths["fp32_gemm"], "packed_gemm");
  EXPECT_EQ(paths["int8_gemm"], "packed_gemm");
  EXPECT_EQ(paths["bf16_gemm"], "unsupported");
  EXPECT_EQ(paths["cpu"], "avx2");
  EXPECT_EQ(paths["quantize"], held["build"]["baseline"]);  // the baseline compilation's code
  if (held["build"]["baseline"] == "avx2") {
    EXPECT_EQ(paths["elementwise"], "avx2");
    EXPECT_EQ(paths["small_gemm"], "avx2");
    EXPECT_EQ(paths["bf16_products"], "none");
  }
}

// ONEDNN_MAX_CPU_ISA=AVX2_VNNI: int8 on oneDNN's VNNI gemm where the CPU has AVX-VNNI (Alder Lake
// and later cores), else oneDNN stays at AVX2 and int8 on packed_gemm's exact int16 products,
// never on oneDNN's saturating AVX2 products. The machines this was written on (AMD Zen 4) have
// no AVX-VNNI, so there this checks the second half only.
TEST_F(InfoCli, OnednnHeldToAvx2VnniWithoutItStaysExact) {
  const auto plain = json::parse(info({"--json"}).out);
  if (plain["build"]["baseline"] == "scalar") GTEST_SKIP() << "built without AVX2";
  const bool avx_vnni = read_text("/proc/cpuinfo").find(" avx_vnni") != std::string::npos;
  const ScopedEnv held("ONEDNN_MAX_CPU_ISA", "AVX2_VNNI");
  const auto r = info({"--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto paths = json::parse(r.out)["code_paths"];
  EXPECT_EQ(paths["int8_gemm"], avx_vnni ? "onednn_avx2_vnni" : "packed_gemm");
  EXPECT_EQ(paths["fp32_gemm"], "packed_gemm");
  EXPECT_EQ(paths["cpu"], "avx2");
}

}  // namespace
}  // namespace onepass
