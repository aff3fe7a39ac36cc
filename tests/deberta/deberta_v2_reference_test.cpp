// The naive reference model itself reproduces the fixture's Hugging Face goldens, so it can be
// trusted as the oracle for configurations the fixture does not cover.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "reference/model_reference.h"
#include "support/model_folder.h"

namespace onepass::testing::deberta_ref {
namespace {

const std::filesystem::path kFixture =
    std::filesystem::path(ONEPASS_TEST_DATA_DIR) / "fixtures/models/deberta-v2-tiny-nli";

std::string slurp(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

TEST(DebertaV2Reference, ReproducesFixtureGoldens) {
  const auto setup = parse_setup(slurp(kFixture / "config.json"));
  const auto tensors = deberta_support::read_safetensors(kFixture / "model.safetensors");
  const TensorSource source = [&](const std::string& name) {
    const auto it = tensors.find(name);
    if (it == tensors.end()) throw std::runtime_error("missing tensor " + name);
    return it->second.values;
  };
  const auto golden = nlohmann::json::parse(slurp(kFixture / "golden.json"));
  int checked = 0;
  double worst = 0;
  for (const auto& c : golden.at("cases")) {
    const auto ids = c.at("input_ids").get<std::vector<std::int32_t>>();
    const auto logits = forward(setup, source, ids, {});
    const auto expected = c.at("logits").get<std::vector<double>>();
    ASSERT_EQ(logits.size(), expected.size());
    for (std::size_t i = 0; i < logits.size(); ++i) {
      EXPECT_NEAR(logits[i], expected[i], 1e-4) << c.at("id") << " logit " << i;
      worst = std::max(worst, std::abs(logits[i] - expected[i]));
    }
    ++checked;
  }
  EXPECT_EQ(checked, 36);
  RecordProperty("max_abs_diff", std::to_string(worst));
  std::printf("reference vs golden: max |logit diff| %.3g over %d cases\n", worst, checked);
}

}  // namespace
}  // namespace onepass::testing::deberta_ref
