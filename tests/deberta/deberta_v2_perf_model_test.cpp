// The full-size mdeberta-v3-base-shaped perf model (shared/perf-models): its golden.json
// logits (transformers v4.47.1, float32) from each case alone and from the padded batch of
// four. The 1.1 GB weights are regenerated outside the repository, so ctest runs this only when
// configured with -DONEPASS_MDEBERTA_DIR=FOLDER (tests/deberta/CMakeLists.txt); by hand, run the
// binary. Make the folder with /usr/bin/python3 shared/perf-models/gen_weights.py
//   --model shared/perf-models/mdeberta-v3-base-shaped --out /tmp/perf/mdeberta-v3-base-shaped
// (the default; or point ONEPASS_MDEBERTA_DIR at such a folder). Missing weights fail the test.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>

#include "model/encoder.h"

namespace onepass::model {
namespace {

std::filesystem::path model_dir() {
  if (const char* env = std::getenv("ONEPASS_MDEBERTA_DIR")) return env;
  return "/tmp/perf/mdeberta-v3-base-shaped";
}

TEST(DebertaV2PerfModel, MdebertaShapedMatchesGolden) {
  const auto dir = model_dir();
  if (!std::filesystem::exists(dir / "model.safetensors"))
    FAIL() << "no regenerated mdeberta-v3-base-shaped weights at " << dir
           << " (see this file's header)";
  std::ifstream in(dir / "golden.json");
  const auto golden = nlohmann::json::parse(in);
  LoadOptions options;
  options.threads = 2;
  const auto encoder = load_encoder(dir, options);

  std::map<std::string, std::vector<std::int32_t>> ids_by_case;
  double worst = 0;
  for (const auto& c : golden.at("cases")) {
    const auto ids = c.at("input_ids").get<std::vector<std::int32_t>>();
    ids_by_case[c.at("id")] = ids;
    ForwardOutput out;
    encoder->forward(std::vector<SequenceInput>{{ids, {}}}, out);
    const auto expected = c.at("logits").get<std::vector<double>>();
    ASSERT_EQ(out.logits.size(), expected.size());
    for (std::size_t i = 0; i < expected.size(); ++i) {
      EXPECT_NEAR(out.logits[i], expected[i], 1e-4) << c.at("id") << " logit " << i;
      worst = std::max(worst, std::abs(out.logits[i] - expected[i]));
    }
  }
  // golden "batch": the same cases run together (padded there, packed here).
  std::vector<SequenceInput> batch;
  for (const auto& id : golden.at("batch").at("ids")) batch.push_back({ids_by_case.at(id), {}});
  ForwardOutput out;
  encoder->forward(batch, out);
  const auto& rows = golden.at("batch").at("rows");
  ASSERT_EQ(out.logits.size(), 3 * rows.size());
  for (std::size_t r = 0; r < rows.size(); ++r) {
    const auto expected = rows[r].at("logits").get<std::vector<double>>();
    for (std::size_t i = 0; i < 3; ++i) {
      EXPECT_NEAR(out.logits[3 * r + i], expected[i], 1e-4) << "batch row " << r;
      worst = std::max(worst, std::abs(out.logits[3 * r + i] - expected[i]));
    }
  }
  std::printf("mdeberta-v3-base-shaped: max |logit - golden| = %.3g\n", worst);
}

}  // namespace
}  // namespace onepass::model
