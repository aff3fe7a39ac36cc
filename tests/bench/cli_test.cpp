// `onepass bench` as a user runs it: the binary against loopback test doubles. Tables on stdout,
// results JSON, exit code 3 when the content verification fails, client-side tokenization for
// the KServe tensor form (onepass's tokenizer through cmd_bench's adapter), compare and report.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <mutex>
#include <nlohmann/json.hpp>
#include <sstream>

#include "fake_server.h"
#include "tests/support/cli_runner.h"
#include "tests/support/temp_dir.h"

namespace onepass::bench::testing {
namespace {

using nlohmann::json;
using onepass::testing::CliResult;
using onepass::testing::TempDir;

const std::filesystem::path kModels =
    std::filesystem::path(ONEPASS_TEST_DATA_DIR) / "fixtures/models";

// `onepass ARGS`, split into arguments at spaces (no argument here holds one).
CliResult onepass(const std::string& args) {
  std::vector<std::string> words;
  std::istringstream in(args);
  for (std::string word; in >> word;) words.push_back(word);
  return onepass::testing::run_onepass(words);
}

json read_json(const std::filesystem::path& path) {
  std::ifstream in(path);
  return json::parse(in);
}

TEST(Cli, SweepPrintsTablesAndWritesResults) {
  FakeServer server([](const FakeRequest& r) { return answer_like_onepass(r, false); });
  TempDir dir("bench_cli");
  const CliResult run =
      onepass("bench --endpoint " + server.url() +
              " -n 10 --warmup 1 --sweep-batch 4 --sweep-concurrency 1,2 --no-progress -o " +
              (dir.path() / "r.json").string());
  ASSERT_EQ(run.exit_code, 0) << run.out;
  EXPECT_NE(run.out.find("batch runs (sweep)"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("concurrency runs (sweep)"), std::string::npos);
  const json doc = read_json(dir.path() / "r.json");
  EXPECT_EQ(doc["schema"], "onepass-bench/1");
  EXPECT_EQ(doc["workload"]["request_rate"], "inf");
  const json& e = doc["endpoints"][0];
  EXPECT_EQ(e["name"], "onepass");
  EXPECT_EQ(e["task"], "classify");
  ASSERT_EQ(e["runs"].size(), 4u);
  EXPECT_EQ(e["runs"][1]["batch_size"], 4);
  EXPECT_TRUE(e["runs"][1]["batch_efficiency"].is_number());
  EXPECT_EQ(e["runs"][3]["concurrency"], 2);
  for (const auto& r : e["runs"]) {
    EXPECT_EQ(r["mismatches"], 0);
    EXPECT_EQ(r["errors"]["total"], 0);
    EXPECT_TRUE(r["accuracy"].is_number());
    for (const char* p : {"mean", "p50", "p90", "p95", "p99", "max"}) {
      EXPECT_TRUE(r["latency_ms"][p].is_number());
    }
  }

  const CliResult report = onepass("bench report " + (dir.path() / "r.json").string() + " -o " +
                                   (dir.path() / "report.html").string());
  ASSERT_EQ(report.exit_code, 0);
  std::ifstream html(dir.path() / "report.html");
  std::stringstream content;
  content << html.rdbuf();
  EXPECT_NE(content.str().find("batch efficiency vs batch size"), std::string::npos);
  EXPECT_NE(content.str().find("<svg"), std::string::npos);
}

TEST(Cli, SwappingServerFailsTheCommand) {
  SwapPairs swap([](const FakeRequest& r) { return answer_like_onepass(r, false); });
  FakeServer server([&](const FakeRequest& r) { return swap(r); });
  const CliResult run =
      onepass("bench --endpoint " + server.url() + " -n 12 --concurrency 4 --no-progress");
  EXPECT_EQ(run.exit_code, 3) << run.out;
  EXPECT_NE(run.out.find("CONTENT VERIFICATION FAILED"), std::string::npos);
}

TEST(Cli, TritonTensorsTokenizedOnTheClient) {
  std::mutex mutex;
  std::vector<json> bodies;
  FakeServer server([&](const FakeRequest& r) {
    std::lock_guard lock(mutex);
    bodies.push_back(json::parse(r.body));
    return answer_like_onepass(r, false);
  });
  TempDir dir("bench_cli");
  const CliResult run = onepass("bench --endpoint " + server.url() +
                                " --dialect triton --model nli "
                                "--tokenizer " +
                                (kModels / "bert-tiny-nli").string() +
                                " -n 4 --batch-size 2 --pad-to-max --max-len 64 --no-progress -o " +
                                (dir.path() / "r.json").string());
  ASSERT_EQ(run.exit_code, 0) << run.out;
  ASSERT_FALSE(bodies.empty());
  const json& ids = bodies.back()["inputs"][0];
  EXPECT_EQ(ids["name"], "input_ids");
  EXPECT_EQ(ids["shape"], json::parse("[2, 64]"));
  EXPECT_EQ(ids["data"][0], 12);  // [CLS] of the fixture's vocab.txt
  EXPECT_EQ(bodies.back()["inputs"][2]["name"], "token_type_ids");
  // Labels come from the folder's config.json id2label, so accuracy is reported.
  const json doc = read_json(dir.path() / "r.json");
  EXPECT_TRUE(doc["endpoints"][0]["reference"]["accuracy"].is_number());
}

TEST(Cli, CompareReportsAgreement) {
  FakeServer a([](const FakeRequest& r) { return answer_like_onepass(r, false); });
  FakeServer b([](const FakeRequest& r) { return answer_like_onepass(r, false); });
  TempDir dir("bench_cli");
  const CliResult run =
      onepass("bench compare --endpoint one=" + a.url() + " --endpoint two=" + b.url() +
              " --dialect two=tei -n 6 --no-progress -o " + (dir.path() / "c.json").string());
  ASSERT_EQ(run.exit_code, 0) << run.out;
  EXPECT_NE(run.out.find("agreement one vs two: 9 of 9 samples (100.0%)"), std::string::npos)
      << run.out;
  const json doc = read_json(dir.path() / "c.json");
  EXPECT_EQ(doc["endpoints"][1]["dialect"], "tei");
  EXPECT_EQ(doc["agreement"][0]["rate"], 1.0);
}

TEST(Cli, BadFlagsAreOneLineErrors) {
  EXPECT_EQ(onepass("bench").exit_code, 2);
  EXPECT_EQ(onepass("bench --endpoint http://127.0.0.1:1 --burstiness -1").exit_code, 2);
  EXPECT_EQ(onepass("bench --endpoint http://127.0.0.1:1 --sweep-batch 1,x").exit_code, 2);
  EXPECT_EQ(onepass("bench compare --endpoint nameless").exit_code, 2);
  EXPECT_EQ(onepass("bench report /nonexistent.json").exit_code, 2);
}

TEST(Cli, BadSageMakerFlagsSayWhatIsWrong) {
  // All refused before any credential lookup or request.
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"bench --sagemaker-endpoint bad_name", "not a SageMaker endpoint name"},
      {"bench --sagemaker-endpoint a --endpoint http://127.0.0.1:1", "bench compare"},
      {"bench compare --sagemaker-endpoint nameless", "--sagemaker-endpoint NAME=VALUE"},
      {"bench compare --sagemaker-endpoint a=-x", "not a SageMaker endpoint name"},
      {"bench compare --region eu-west-1", "--sagemaker-endpoint NAME=ENDPOINT"},
  };
  for (const auto& [args, words] : cases) {
    const CliResult run = onepass(args);
    EXPECT_EQ(run.exit_code, 2) << args;
    EXPECT_NE(run.err.find(words), std::string::npos) << args << ": " << run.err;
  }
}

}  // namespace
}  // namespace onepass::bench::testing
