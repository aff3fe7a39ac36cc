// The fixture catalogue (tests/support/fixture_catalogue.h) against the folders it describes:
// every folder under tests/data/fixtures/models has exactly one line and every line a folder, so
// a new fixture without its line fails here rather than going untested; and each line's family,
// task and file-backed flags agree with the folder's own config.json, golden.json and files.
#include "tests/support/fixture_catalogue.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>

#include "tests/support/golden_file.h"
#include "tests/support/paths.h"

namespace onepass::testing {
namespace {

namespace fs = std::filesystem;

fs::path catalogue_models_dir() { return fs::path(fixture_model("")); }

std::set<std::string> model_folders_on_disk() {
  std::set<std::string> out;
  for (const auto& entry : fs::directory_iterator(catalogue_models_dir()))
    if (entry.is_directory()) out.insert(entry.path().filename().string());
  return out;
}

// config.json's model_type for each family (GTE's remote code names itself "new").
std::string model_type_of(FixtureFamily family) {
  static const std::map<FixtureFamily, std::string> kModelTypes = {
      {FixtureFamily::kBert, "bert"},
      {FixtureFamily::kRoberta, "roberta"},
      {FixtureFamily::kXlmr, "xlm-roberta"},
      {FixtureFamily::kCamembert, "camembert"},
      {FixtureFamily::kDeberta, "deberta"},
      {FixtureFamily::kDebertaV2, "deberta-v2"},
      {FixtureFamily::kDistilbert, "distilbert"},
      {FixtureFamily::kElectra, "electra"},
      {FixtureFamily::kMpnet, "mpnet"},
      {FixtureFamily::kModernbert, "modernbert"},
      {FixtureFamily::kNomicBert, "nomic_bert"},
      {FixtureFamily::kGte, "new"},
      {FixtureFamily::kGliner, "deberta-v2"},
  };
  return kModelTypes.at(family);
}

FixtureTokenizer tokenizer_on_disk(const fs::path& dir) {
  if (fs::exists(dir / "vocab.txt")) return FixtureTokenizer::kWordPiece;
  if (fs::exists(dir / "vocab.json") && fs::exists(dir / "merges.txt"))
    return FixtureTokenizer::kByteLevelBpe;
  return FixtureTokenizer::kSentencePiece;
}

TEST(FixtureCatalogue, EveryModelFolderHasOneLine) {
  std::set<std::string> listed;
  for (const Fixture& fixture : fixture_catalogue())
    EXPECT_TRUE(listed.insert(std::string(fixture.name)).second)
        << fixture.name << " is listed twice";
  for (const std::string& folder : model_folders_on_disk())
    EXPECT_TRUE(listed.count(folder) > 0)
        << "tests/data/fixtures/models/" << folder
        << " has no line in tests/support/fixture_catalogue.cpp: add one, so the suites run it";
}

TEST(FixtureCatalogue, EveryLineHasAFolderWithAGolden) {
  for (const Fixture& fixture : fixture_catalogue()) {
    EXPECT_TRUE(fs::is_regular_file(fs::path(fixture.dir()) / "golden.json"))
        << fixture.name << ": no such fixture folder with a golden.json";
  }
}

TEST(FixtureCatalogue, FamilyAndTaskAreTheFoldersOwn) {
  for (const Fixture& fixture : fixture_catalogue()) {
    SCOPED_TRACE(std::string(fixture.name));
    // A GLiNER folder describes its backbone in gliner_config.json's encoder_config.
    const bool gliner = fixture.family == FixtureFamily::kGliner;
    std::ifstream config(fs::path(fixture.dir()) / (gliner ? "gliner_config.json" : "config.json"));
    ASSERT_TRUE(config.good());
    const auto parsed = nlohmann::json::parse(config);
    EXPECT_EQ((gliner ? parsed.at("encoder_config") : parsed).at("model_type"),
              model_type_of(fixture.family));
    const auto golden = read_golden(std::string(fixture.name));
    EXPECT_EQ(golden.at("task"), golden_task_name(fixture.task));
    EXPECT_EQ(golden.contains("remote_code"), fixture.has(kRemoteCode));
  }
}

TEST(FixtureCatalogue, FileFlagsAndTokenizerMatchTheFolder) {
  for (const Fixture& fixture : fixture_catalogue()) {
    SCOPED_TRACE(std::string(fixture.name));
    const fs::path dir = fixture.dir();
    EXPECT_EQ(fs::exists(dir / "fill_mask_golden.json"), fixture.has(kFillMaskGolden));
    EXPECT_EQ(fs::exists(dir / "modules.json"), fixture.has(kSentenceTransformers));
    EXPECT_EQ(tokenizer_on_disk(dir), fixture.tokenizer);
  }
}

TEST(FixtureCatalogue, FiltersSelectByTaskAndFlag) {
  const auto classifiers = fixtures_with_task({FixtureTask::kClassifier});
  EXPECT_FALSE(classifiers.empty());
  for (const auto& name : classifiers)
    EXPECT_EQ(fixture_named(name).task, FixtureTask::kClassifier) << name;
  // sentence-transformers folders are embedders, but not in the golden suites' selection.
  for (const auto& name : fixtures_with_task({FixtureTask::kEmbedder}))
    EXPECT_FALSE(fixture_named(name).has(kSentenceTransformers)) << name;
  // The gate judges int8 by label or ranking agreement: only a classifier or reranker is refused.
  const auto refused = fixtures_where([](const Fixture& f) { return f.has(kInt8Refused); });
  EXPECT_FALSE(refused.empty());
  for (const auto& name : refused) {
    const FixtureTask task = fixture_named(name).task;
    EXPECT_TRUE(task == FixtureTask::kClassifier || task == FixtureTask::kReranker) << name;
  }
  EXPECT_THROW(fixture_named("no-such-fixture"), std::out_of_range);
  EXPECT_EQ(fixture_test_name("deberta-v2-tiny-mlm-legacy"), "deberta_v2_tiny_mlm_legacy");
}

}  // namespace
}  // namespace onepass::testing
