// `--precision auto` through the real binary: `check --save-verdict` saves the verdict that
// `info` then reports and `run --precision auto` loads, and `serve` and `run` refuse a bad
// --precision-check-data or precision with exit 2 and a message naming the flag and the problem,
// before any port opens.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tests/support/cli_runner.h"
#include "tests/support/temp_dir.h"

namespace onepass {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using ::testing::HasSubstr;
using testing::run_onepass;
using testing::TempDir;

const fs::path kAutoModels = fs::path(ONEPASS_TEST_DATA_DIR) / "fixtures/models";

TEST(PrecisionAutoCli, SaveVerdictIsWhatInfoReports) {
  TempDir state("auto_cli");
  const std::string model = (kAutoModels / "distilbert-tiny-nli").string();
  const auto none = run_onepass({"info", model, "--json", "--state-dir", state.path().string()});
  ASSERT_EQ(none.exit_code, 0) << none.err;
  EXPECT_FALSE(json::parse(none.out)["precision_auto"]["cached"].get<bool>());
  EXPECT_FALSE(fs::exists(state.path() / "file-digests"));  // info writes nothing

  const auto check = run_onepass(
      {"check", "--model", model, "--save-verdict", "--state-dir", state.path().string()});
  ASSERT_EQ(check.exit_code, 0) << check.err;
  const json report = json::parse(check.out);
  EXPECT_EQ(report["precision"], "auto");
  EXPECT_NE(report["chosen"], "int8");  // the catalogue flags this fixture kInt8Refused
  EXPECT_EQ(report["gates"][0]["precision"], "int8");
  EXPECT_FALSE(report["gates"][0]["pass"].get<bool>());
  ASSERT_TRUE(report["saved"].is_string());
  EXPECT_TRUE(fs::exists(report["saved"].get<std::string>()));

  const auto info = run_onepass({"info", model, "--json", "--state-dir", state.path().string()});
  ASSERT_EQ(info.exit_code, 0) << info.err;
  const json a = json::parse(info.out)["precision_auto"];
  EXPECT_TRUE(a["cached"].get<bool>());
  EXPECT_EQ(a["precision"], report["chosen"]);
  EXPECT_EQ(a["verdict"], report["verdict"]);

  // `run --precision auto` reads the saved verdict (no second gate) and computes in the precision
  // it names: its answers are those of a run pinned to that precision.
  const std::string chosen = report["chosen"].get<std::string>();
  const std::string lines = "{\"text\": \"a fine day\"}\n{\"text\": \"it rains\"}\n";
  const auto run = run_onepass(
      {"run", "--model", model, "--precision", "auto", "--state-dir", state.path().string()},
      lines);
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_THAT(run.err, HasSubstr("precision auto: " + chosen + " (saved verdict"));
  EXPECT_THAT(run.err, HasSubstr(report["verdict"].get<std::string>()));
  const auto pinned =
      run_onepass({"run", "--model", model, "--precision", chosen, "--force-precision"}, lines);
  ASSERT_EQ(pinned.exit_code, 0) << pinned.err;
  EXPECT_EQ(run.out, pinned.out);
  const auto bench = run_onepass({"run", "--model", model, "--precision", "auto", "--state-dir",
                                  state.path().string(), "--bench"},
                                 lines);
  ASSERT_EQ(bench.exit_code, 0) << bench.err;
  const json timed = json::parse(bench.out);
  EXPECT_EQ(timed["precision"], chosen);
  EXPECT_EQ(timed["precision_mode"], "auto");
}

TEST(PrecisionAutoCli, BadSettingsExitTwoNamingTheProblem) {
  TempDir dir("auto_cli");
  const auto data = dir.path() / "texts.jsonl";
  std::ofstream(data) << "{\"text\": \"fine\"}\n{\"text\": 42}\n";
  const std::string model = (kAutoModels / "bert-tiny-nli").string();
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"serve", "--port", "0", "--precision", "auto", "--precision-check-data", data.string(),
        "--model", model},
       "--precision-check-data: precision check data line 2: expected \"text\""},
      {{"serve", "--port", "0", "--precision", "auto", "--precision-check-data",
        (dir.path() / "missing.jsonl").string(), "--model", model},
       "missing.jsonl cannot be read"},
      {{"serve", "--port", "0", "--precision", "fp64", "--model", model},
       "unknown precision 'fp64' (fp32, bf16, int8 or auto)"},
      {{"serve", "--port", "0", "--model", model + "#fastest"}, "unknown precision 'fastest'"},
      {{"check", "--model", model, "--precision", "int8", "--save-verdict"},
       "--save-verdict and --precision-check-data go with --precision auto"},
      {{"run", "--model", model, "--precision", "auto", "--force-precision"},
       "--force-precision needs one precision (bf16 or int8), not auto"},
      {{"run", "--model", model, "--state-dir", dir.path().string()},
       "--state-dir and --precision-check-data go with --precision auto"},
      {{"run", "--model", model, "--precision", "auto", "--precision-check-data", data.string()},
       "--precision-check-data: precision check data line 2"},
      {{"run", "--model", model, "--precision", "fastest"}, "unknown precision 'fastest'"},
  };
  for (const auto& [args, message] : cases) {
    SCOPED_TRACE(args[0] + " " + message);
    const auto r = run_onepass(args, {}, std::chrono::seconds(60));
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_THAT(r.err, HasSubstr(message));
    EXPECT_THAT(r.out, ::testing::Not(HasSubstr("listening")));
  }
}

}  // namespace
}  // namespace onepass
