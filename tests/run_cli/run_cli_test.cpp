// `onepass run` through the real binary against the fixtures' goldens: every case of each
// BERT-family folder fed as input_ids lines in one run, in odd batch sizes.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "tests/support/cli_runner.h"
#include "tests/support/files.h"
#include "tests/support/fixture_catalogue.h"
#include "tests/support/golden_file.h"
#include "tests/support/temp_dir.h"
#include "tests/support/vector_compare.h"

namespace onepass {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using testing::read_text;
using testing::run_onepass;
using testing::TempDir;

fs::path model_dir(const std::string& name) {
  return fs::path(ONEPASS_TEST_DATA_DIR) / "fixtures/models" / name;
}

using testing::read_golden;

// One input line per golden case: ids (and token types when the golden has them), id = index.
std::string id_lines(const json& g) {
  std::string lines;
  for (std::size_t i = 0; i < g["cases"].size(); ++i) {
    const auto& c = g["cases"][i];
    json line{{"id", i}, {"input_ids", c["input_ids"]}};
    if (c.contains("token_type_ids")) line["token_type_ids"] = c["token_type_ids"];
    lines += line.dump() + "\n";
  }
  return lines;
}

std::vector<json> output_lines(const std::string& out) {
  std::vector<json> lines;
  std::istringstream in(out);
  std::string line;
  while (std::getline(in, line)) lines.push_back(json::parse(line));
  return lines;
}

// Two JSON arrays of numbers through tests/support/vector_compare.h.
double max_abs_diff(const json& a, const json& b) {
  return testing::max_abs_diff(a.get<std::vector<double>>(), b.get<std::vector<double>>());
}

class ClassifierGolden : public ::testing::TestWithParam<std::string> {};

TEST_P(ClassifierGolden, EveryCaseThroughTheBinary) {
  const auto g = read_golden(GetParam());
  const auto r = run_onepass(
      {"run", "--model", model_dir(GetParam()).string(), "--batch-size", "5", "--threads", "1"},
      id_lines(g));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto lines = output_lines(r.out);
  ASSERT_EQ(lines.size(), g["cases"].size());
  for (std::size_t i = 0; i < lines.size(); ++i) {
    const auto& c = g["cases"][i];
    SCOPED_TRACE(c["id"].get<std::string>());
    EXPECT_EQ(lines[i]["id"], i);
    if (c["logits"].size() == 1) {
      EXPECT_NEAR(lines[i]["score"].get<double>(), c["probs"][0].get<double>(),
                  1e-4);  // sigmoid score
    } else {
      EXPECT_LE(max_abs_diff(lines[i]["logits"], c["logits"]), 1e-4);
      EXPECT_LE(max_abs_diff(lines[i]["probs"], c["probs"]), 1e-4);
      EXPECT_EQ(lines[i]["label"], c["label"]);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Fixtures, ClassifierGolden,
                         ::testing::ValuesIn(testing::fixtures_with_task(
                             {testing::FixtureTask::kClassifier, testing::FixtureTask::kReranker})),
                         [](const auto& info) { return testing::fixture_test_name(info.param); });

// A SPLADE model's answer: its vector's non-zero entries, as the golden lists them.
TEST(RunCli, SparseEmbeddingsOfEveryCase) {
  for (const std::string& model : testing::fixtures_with_task({testing::FixtureTask::kSplade})) {
    SCOPED_TRACE(model);
    const auto g = read_golden(model);
    const auto r = run_onepass({"run", "--model", model_dir(model).string(), "--batch-size", "4"},
                               id_lines(g));
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const auto lines = output_lines(r.out);
    ASSERT_EQ(lines.size(), g["cases"].size());
    for (std::size_t i = 0; i < lines.size(); ++i) {
      const auto& expected = g["cases"][i]["splade"];
      const auto& sparse = lines[i]["sparse"];
      ASSERT_EQ(sparse.size(), expected["indices"].size()) << i;
      for (std::size_t k = 0; k < sparse.size(); ++k) {
        EXPECT_EQ(sparse[k]["index"], expected["indices"][k]) << i;
        EXPECT_NEAR(sparse[k]["value"].get<double>(), expected["values"][k].get<double>(), 1e-4);
      }
    }
  }
}

// A token classifier's answer: every token's logits and arg-max label, for the first fixture of
// the task (the engine's goldens cover every family; this is run's formatting of the task).
TEST(RunCli, TokenLogitsAndLabelsOfEveryCase) {
  const auto models = testing::fixtures_with_task({testing::FixtureTask::kTokenClassifier});
  ASSERT_FALSE(models.empty());
  const std::string& model = models.front();
  const auto g = read_golden(model);
  const auto r =
      run_onepass({"run", "--model", model_dir(model).string(), "--batch-size", "3"}, id_lines(g));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto lines = output_lines(r.out);
  ASSERT_EQ(lines.size(), g["cases"].size());
  for (std::size_t i = 0; i < lines.size(); ++i) {
    const auto& expected = g["cases"][i];
    ASSERT_EQ(lines[i]["logits"].size(), expected["logits"].size()) << i;
    ASSERT_EQ(lines[i]["labels"].size(), expected["logits"].size()) << i;
    for (std::size_t t = 0; t < expected["logits"].size(); ++t) {
      EXPECT_LE(max_abs_diff(lines[i]["logits"][t], expected["logits"][t]), 1e-4) << i << ":" << t;
      if (expected.contains("labels")) {
        EXPECT_EQ(lines[i]["labels"][t], expected["labels"][t]) << i << ":" << t;
      }
    }
  }
}

// An extract model (GLiNER) needs the labels of each request built into its prompt, which is
// the server's: run refuses it before loading, naming the route that serves it.
TEST(RunCli, AnExtractModelIsRefusedNamingTheRoute) {
  const auto models = testing::fixtures_with_task({testing::FixtureTask::kExtractor});
  ASSERT_FALSE(models.empty());
  const auto r =
      run_onepass({"run", "--model", model_dir(models.front()).string()}, "{\"text\":\"Paris\"}\n");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("POST /extract"), std::string::npos) << r.err;
  EXPECT_TRUE(r.out.empty());
}

// A question-answering model's answer: every token's start and end logit; each golden case is
// one window of a (question, context), its ids as the pipeline cuts them.
TEST(RunCli, QuestionAnsweringLogitsOfEveryWindow) {
  for (const std::string& model :
       testing::fixtures_with_task({testing::FixtureTask::kQuestionAnswering})) {
    SCOPED_TRACE(model);
    const auto g = read_golden(model);
    const auto r = run_onepass({"run", "--model", model_dir(model).string(), "--batch-size", "3"},
                               id_lines(g));
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const auto lines = output_lines(r.out);
    ASSERT_EQ(lines.size(), g["cases"].size());
    for (std::size_t i = 0; i < lines.size(); ++i) {
      const auto& logits = g["cases"][i]["logits"];
      json start = json::array(), end = json::array();
      for (const auto& row : logits) {
        start.push_back(row[0]);
        end.push_back(row[1]);
      }
      ASSERT_EQ(lines[i]["start_logits"].size(), start.size()) << i;
      ASSERT_EQ(lines[i]["end_logits"].size(), end.size()) << i;
      EXPECT_LE(max_abs_diff(lines[i]["start_logits"], start), 1e-4) << i;
      EXPECT_LE(max_abs_diff(lines[i]["end_logits"], end), 1e-4) << i;
    }
  }
}

TEST(RunCli, EmbeddingsWithEachPoolingAndToAFile) {
  TempDir dir("run_cli");
  const auto g = read_golden("bert-tiny-embed");
  for (const std::string kind : {"cls", "mean", "cls_l2", "mean_l2"}) {
    SCOPED_TRACE(kind);
    std::vector<std::string> args{"run",
                                  "--model",
                                  model_dir("bert-tiny-embed").string(),
                                  "--pooling",
                                  kind.substr(0, kind.find('_')),
                                  "--output",
                                  (dir.path() / "out.jsonl").string()};
    if (kind.find("_l2") != std::string::npos) args.push_back("--normalize");
    const auto r = run_onepass(args, id_lines(g));
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_TRUE(r.out.empty());
    const auto lines = output_lines(read_text(dir.path() / "out.jsonl"));
    ASSERT_EQ(lines.size(), g["cases"].size());
    for (std::size_t i = 0; i < lines.size(); ++i) {
      EXPECT_LE(max_abs_diff(lines[i]["embedding"], g["cases"][i]["embedding"][kind]), 1e-4) << i;
    }
  }
}

// Without --pooling, the folder's 1_Pooling/config.json decides, as it does for `serve`.
TEST(RunCli, EmbeddingsFollowTheFoldersPooling) {
  TempDir dir("run_cli");
  const auto g = read_golden("bert-tiny-embed");
  const auto folder = dir.path() / "bge-like";
  std::filesystem::create_directories(folder / "1_Pooling");
  for (const auto& f : std::filesystem::directory_iterator(model_dir("bert-tiny-embed")))
    if (f.is_regular_file()) std::filesystem::copy_file(f.path(), folder / f.path().filename());
  std::ofstream(folder / "1_Pooling" / "config.json")
      << R"({"pooling_mode_cls_token": true, "pooling_mode_mean_tokens": false})";
  for (const auto& [pooling, kind] :
       std::vector<std::pair<std::string, std::string>>{{"", "cls"}, {"mean", "mean"}}) {
    SCOPED_TRACE(kind);
    std::vector<std::string> args{"run", "--model", folder.string()};
    if (!pooling.empty()) args.insert(args.end(), {"--pooling", pooling});
    const auto r = run_onepass(args, id_lines(g));
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const auto lines = output_lines(r.out);
    ASSERT_EQ(lines.size(), g["cases"].size());
    for (std::size_t i = 0; i < lines.size(); ++i)
      EXPECT_LE(max_abs_diff(lines[i]["embedding"], g["cases"][i]["embedding"][kind]), 1e-4) << i;
  }
}

// A sentence-transformers folder's Dense modules run after pooling, as in `serve`; --normalize
// then gives the library's encode() output (its modules end in Normalize).
TEST(RunCli, EmbeddingsGoThroughTheFoldersDenseModules) {
  const auto g = read_golden("bert-tiny-st-dense");
  for (const std::string stage : {"before_normalize", "sentence_embedding"}) {
    SCOPED_TRACE(stage);
    std::vector<std::string> args{"run", "--model", model_dir("bert-tiny-st-dense").string()};
    if (stage == "sentence_embedding") args.push_back("--normalize");
    const auto r = run_onepass(args, id_lines(g));
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const auto lines = output_lines(r.out);
    ASSERT_EQ(lines.size(), g["cases"].size());
    for (std::size_t i = 0; i < lines.size(); ++i) {
      const auto& expected = g["cases"][i]["sentence_transformers"][stage];
      ASSERT_EQ(lines[i]["embedding"].size(), expected.size());
      EXPECT_LE(max_abs_diff(lines[i]["embedding"], expected), 1e-4) << i;
    }
  }
}

TEST(RunCli, BenchPrintsOneReport) {
  const auto g = read_golden("bert-tiny-nli");
  const auto r = run_onepass(
      {"run", "--model", model_dir("bert-tiny-nli").string(), "--bench", "--batch-size", "8"},
      id_lines(g));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto lines = output_lines(r.out);
  ASSERT_EQ(lines.size(), 1u);
  const auto& report = lines[0];
  EXPECT_EQ(report["task"], "classifier");  // the task table's name for the folder's task
  EXPECT_EQ(report["batch_size"], 8);
  EXPECT_EQ(report["batches"], (g["cases"].size() + 7) / 8);
  for (const char* key : {"p50_ms", "p90_ms", "p99_ms", "samples_per_s", "tokens_per_s"}) {
    ASSERT_TRUE(report.contains(key)) << key;
    EXPECT_GT(report[key].get<double>(), 0.0) << key;
  }
  EXPECT_LE(report["p50_ms"].get<double>(), report["p99_ms"].get<double>());
}

// Text lines go through the folder's tokenizer; the ids the fast tokenizer gives equal the
// golden input_ids except where the golden lists fast_input_ids.
TEST(RunCli, TextLinesThroughTheTokenizer) {
  const auto g = read_golden("bert-tiny-nli");
  std::string lines;
  std::vector<std::size_t> picked;
  for (std::size_t i = 0; i < g["cases"].size(); ++i) {
    const auto& c = g["cases"][i];
    if (c.contains("truncation") || c.contains("fast_input_ids"))
      continue;  // run does not truncate
    json line{{"id", i}};
    if (c.contains("pair")) {
      line["text"] = c["pair"][0];
      line["text_pair"] = c["pair"][1];
    } else {
      line["text"] = c["text"];
    }
    lines += line.dump() + "\n";
    picked.push_back(i);
  }
  const auto r = run_onepass({"run", "--model", model_dir("bert-tiny-nli").string()}, lines);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto out = output_lines(r.out);
  ASSERT_EQ(out.size(), picked.size());
  for (std::size_t k = 0; k < out.size(); ++k) {
    const auto& c = g["cases"][picked[k]];
    EXPECT_EQ(out[k]["id"], picked[k]);
    EXPECT_LE(max_abs_diff(out[k]["logits"], c["logits"]), 1e-4) << c["id"];
    EXPECT_EQ(out[k]["label"], c["label"]);
  }
}

}  // namespace
}  // namespace onepass
