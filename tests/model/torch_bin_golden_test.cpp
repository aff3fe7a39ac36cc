// Fixture models loaded from pytorch_model.bin instead of model.safetensors (the checkpoints
// tools/fixtures/make_torch_bin.py wrote with torch.save from the same weights) answer every
// golden case as transformers did: logits within 1e-4, the same labels. The folder holds only
// config.json and the checkpoint, so nothing else can supply the weights.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "model/encoder.h"
#include "model/heads/postprocess.h"
#include "tests/model/golden.h"
#include "tests/support/temp_dir.h"

namespace onepass::model {
namespace {

namespace fs = std::filesystem;
using onepass::testing::fixture_model_dir;
using onepass::testing::load_golden;

const fs::path kTorchBin = fs::path(ONEPASS_TEST_DATA_DIR) / "torch_bin";

class TorchBinGoldenTest : public ::testing::TestWithParam<const char*> {};

TEST_P(TorchBinGoldenTest, EveryCaseMatchesTransformers) {
  const std::string name = GetParam();
  onepass::testing::TempDir dir("torch_bin_golden");
  fs::copy_file(fixture_model_dir(name) / "config.json", dir.path() / "config.json");
  for (const auto& file : fs::directory_iterator(kTorchBin / name)) {
    fs::copy_file(file.path(), dir.path() / file.path().filename());
  }
  ASSERT_FALSE(fs::exists(dir.path() / "model.safetensors"));

  const auto golden = load_golden(name);
  const auto encoder = load_encoder(dir.path());
  const auto& info = encoder->info();
  ASSERT_EQ(info.head, HeadKind::kSequenceClassification);
  ASSERT_FALSE(golden.cases.empty());
  float worst = 0.0f;
  for (const auto& c : golden.cases) {
    SCOPED_TRACE(c.id);
    const SequenceInput input = c.input();
    ForwardOutput out;
    encoder->forward(std::span(&input, 1), out);
    ASSERT_EQ(out.logits.size(), c.logits.size());
    for (std::size_t i = 0; i < c.logits.size(); ++i) {
      worst = std::max(worst, std::abs(out.logits[i] - c.logits[i]));
    }
    EXPECT_EQ(heads::label_for(out.logits, info.id2label), c.label);
  }
  EXPECT_LE(worst, 1e-4f);
  std::printf("[%s from pytorch_model.bin] %zu cases: max |logit diff| %.3g\n", name.c_str(),
              golden.cases.size(), static_cast<double>(worst));
}

// bert-tiny-nli: one file with a strided tensor and shared storages; xlmr-tiny-nli: two shards
// and pytorch_model.bin.index.json.
INSTANTIATE_TEST_SUITE_P(Fixtures, TorchBinGoldenTest,
                         ::testing::Values("bert-tiny-nli", "xlmr-tiny-nli"), [](const auto& info) {
                           return onepass::testing::fixture_test_name(info.param);
                         });

}  // namespace
}  // namespace onepass::model
