// The masked-LM head's two outputs (model/layers/masked_lm_head.h) on the fixture masked-LM
// models: the vocabulary logits at named positions (fill-mask) agree with the SPLADE vectors of
// golden.json (transformers): log1p(relu(.)) of their max over every position is the SPLADE
// vector; a batch mixing SPLADE and position sequences gives each what it gives alone; bad
// positions are refused before anything runs.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <numeric>
#include <string>

#include "base/error.h"
#include "model/encoder.h"
#include "tests/model/golden.h"
#include "tests/support/vector_compare.h"

namespace onepass::model {
namespace {

using onepass::testing::fixture_model_dir;
using onepass::testing::load_golden;
using onepass::testing::max_abs_diff;

class MaskedLmHead : public ::testing::TestWithParam<std::string> {};

TEST_P(MaskedLmHead, LogitsAtEveryPositionPoolToTheGoldenSpladeVector) {
  const auto golden = load_golden(GetParam());
  const auto encoder = load_encoder(fixture_model_dir(GetParam()));
  const auto vocab = static_cast<std::size_t>(encoder->info().vocab_size);
  for (const auto& c : golden.cases) {
    SCOPED_TRACE(c.id);
    std::vector<std::int32_t> all(c.input_ids.size());
    std::iota(all.begin(), all.end(), 0);
    SequenceInput input = c.input();
    input.vocab_logit_positions = all;
    ForwardOutput out;
    encoder->forward(std::span(&input, 1), out);
    ASSERT_EQ(out.position_logits.size(), all.size() * vocab);
    ASSERT_EQ(out.logits.size(), vocab);
    EXPECT_TRUE(std::all_of(out.logits.begin(), out.logits.end(), [](float v) { return v == 0; }))
        << "a sequence that names positions has no SPLADE vector";
    std::vector<float> expected(vocab, 0.0f);
    for (std::size_t i = 0; i < c.splade_indices.size(); ++i)
      expected.at(static_cast<std::size_t>(c.splade_indices[i])) = c.splade_values[i];
    std::vector<float> pooled(vocab, 0.0f);
    for (std::size_t p = 0; p < all.size(); ++p) {
      for (std::size_t v = 0; v < vocab; ++v) {
        pooled[v] =
            std::max(pooled[v], std::log1p(std::max(out.position_logits[p * vocab + v], 0.0f)));
      }
    }
    EXPECT_LE(max_abs_diff(pooled, expected), 1e-4f);
  }
}

TEST_P(MaskedLmHead, MixedBatchGivesEachSequenceWhatItGetsAlone) {
  const auto golden = load_golden(GetParam());
  const auto encoder = load_encoder(fixture_model_dir(GetParam()));
  const auto vocab = static_cast<std::size_t>(encoder->info().vocab_size);
  const std::size_t n = std::min<std::size_t>(golden.cases.size(), 12);
  // Odd sequences ask for their last, first and middle positions; even ones for SPLADE.
  std::vector<std::vector<std::int32_t>> positions(n);
  std::vector<SequenceInput> batch;
  for (std::size_t i = 0; i < n; ++i) {
    const auto len = static_cast<std::int32_t>(golden.cases[i].input_ids.size());
    if (i % 2 == 1) positions[i] = {len - 1, 0, len / 2};
    batch.push_back(golden.cases[i].input());
    batch.back().vocab_logit_positions = positions[i];
  }
  ForwardOutput together;
  encoder->forward(batch, together);
  std::size_t row = 0;
  for (std::size_t i = 0; i < n; ++i) {
    SCOPED_TRACE(golden.cases[i].id);
    ForwardOutput alone;
    encoder->forward(std::span(&batch[i], 1), alone);
    const std::span<const float> splade(together.logits.data() + i * vocab, vocab);
    EXPECT_LE(max_abs_diff(splade, alone.logits), 1e-5f);
    const std::size_t count = positions[i].size();
    const std::span<const float> logits(together.position_logits.data() + row * vocab,
                                        count * vocab);
    EXPECT_LE(max_abs_diff(logits, alone.position_logits), 1e-5f);
    row += count;
  }
  EXPECT_EQ(together.position_logits.size(), row * vocab);
}

TEST_P(MaskedLmHead, PositionOutsideTheSequenceIsRefused) {
  const auto golden = load_golden(GetParam());
  const auto encoder = load_encoder(fixture_model_dir(GetParam()));
  SequenceInput input = golden.cases.front().input();
  for (const std::int32_t bad : {static_cast<std::int32_t>(input.input_ids.size()), -1}) {
    const std::int32_t positions[] = {0, bad};
    input.vocab_logit_positions = positions;
    ForwardOutput out;
    try {
      encoder->forward(std::span(&input, 1), out);
      ADD_FAILURE() << "position " << bad << " was accepted";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::kInvalidInput);
      EXPECT_NE(std::string(e.what()).find("outside the sequence"), std::string::npos) << e.what();
    }
  }
}

// Every masked-LM fixture of the catalogue, SPLADE-named or not
// (tests/support/fixture_catalogue.h).
INSTANTIATE_TEST_SUITE_P(
    Fixtures, MaskedLmHead,
    ::testing::ValuesIn(onepass::testing::fixtures_with_task(
        {onepass::testing::FixtureTask::kSplade, onepass::testing::FixtureTask::kMaskedLm})),
    [](const auto& info) { return onepass::testing::fixture_test_name(info.param); });

TEST(MaskedLmHeadOnly, OtherHeadsRefusePositions) {
  const auto golden = load_golden("bert-tiny-nli");
  const auto encoder = load_encoder(fixture_model_dir("bert-tiny-nli"));
  SequenceInput input = golden.cases.front().input();
  const std::int32_t positions[] = {0};
  input.vocab_logit_positions = positions;
  ForwardOutput out;
  EXPECT_THROW(encoder->forward(std::span(&input, 1), out), Error);
}

// Microsoft's DeBERTa-v3 checkpoints ship the lm_predictions head, which transformers reads only
// with "legacy": false (with the default it builds a random cls.predictions head): without the
// flag, the load is refused naming it rather than answering from a head that is not there.
TEST(MaskedLmHeadOnly, DebertaV3HeadWithoutLegacyFalseIsRefusedNamingTheFlag) {
  namespace fs = std::filesystem;
  const fs::path dir =
      fs::temp_directory_path() / ("onepass-deberta-legacy-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  for (const auto& entry : fs::directory_iterator(fixture_model_dir("deberta-v2-tiny-mlm")))
    fs::copy_file(entry.path(), dir / entry.path().filename(),
                  fs::copy_options::overwrite_existing);
  nlohmann::json config;
  std::ifstream(dir / "config.json") >> config;
  ASSERT_EQ(config["legacy"], false);
  config.erase("legacy");
  std::ofstream(dir / "config.json") << config.dump();
  try {
    load_encoder(dir);
    ADD_FAILURE() << "loaded a legacy head the checkpoint does not have";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kUnsupported) << e.what();
    EXPECT_NE(std::string(e.what()).find("\"legacy\": false"), std::string::npos) << e.what();
  }
  fs::remove_all(dir);
}

}  // namespace
}  // namespace onepass::model
