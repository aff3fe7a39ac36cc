// deberta-v2-tiny-nli fixture: every golden case fed from input_ids reproduces transformers'
// logits (1e-4) and label, and each case gives the same logits alone and inside batches of 2, 7
// and 32 with random other cases in random slots (1e-5).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <random>
#include <sstream>

#include "base/error.h"
#include "model/architectures/deberta_v2.h"
#include "weights/config.h"
#include "weights/weight_store.h"

namespace onepass::model {
namespace {

const std::filesystem::path kFixture =
    std::filesystem::path(ONEPASS_TEST_DATA_DIR) / "fixtures/models/deberta-v2-tiny-nli";

struct GoldenCase {
  std::string id;
  std::vector<std::int32_t> ids;
  std::vector<float> logits;
  std::string label;
};

std::vector<GoldenCase> read_cases() {
  std::ifstream in(kFixture / "golden.json");
  const auto golden = nlohmann::json::parse(in);
  std::vector<GoldenCase> cases;
  for (const auto& c : golden.at("cases")) {
    GoldenCase g{c.at("id"), c.at("input_ids").get<std::vector<std::int32_t>>(), {}, c.at("label")};
    for (const double v : c.at("logits")) g.logits.push_back(static_cast<float>(v));
    cases.push_back(std::move(g));
  }
  return cases;
}

std::unique_ptr<Encoder> load_fixture(int threads) {
  LoadOptions options;
  options.threads = threads;
  return load_deberta_v2(weights::load_model_config(kFixture), weights::WeightStore::open(kFixture),
                         options);
}

std::vector<float> run(const Encoder& encoder, const std::vector<const GoldenCase*>& batch) {
  std::vector<SequenceInput> inputs;
  for (const auto* c : batch) inputs.push_back({c->ids, {}});
  ForwardOutput out;
  encoder.forward(inputs, out);
  return out.logits;
}

TEST(DebertaV2Golden, EveryCaseMatchesTransformers) {
  const auto cases = read_cases();
  ASSERT_EQ(cases.size(), 36u);
  const auto encoder = load_fixture(2);
  const ModelInfo& info = encoder->info();
  EXPECT_EQ(info.head, HeadKind::kSequenceClassification);
  ASSERT_EQ(info.num_labels, 3);
  EXPECT_EQ(info.max_tokens, 512);
  double worst = 0;
  for (const auto& c : cases) {
    const auto logits = run(*encoder, {&c});
    ASSERT_EQ(logits.size(), 3u);
    for (int i = 0; i < 3; ++i) {
      EXPECT_NEAR(logits[i], c.logits[i], 1e-4) << c.id << " logit " << i;
      worst = std::max(worst, static_cast<double>(std::abs(logits[i] - c.logits[i])));
    }
    const auto best = std::max_element(logits.begin(), logits.end()) - logits.begin();
    EXPECT_EQ(info.id2label.at(best), c.label) << c.id;
  }
  std::printf("deberta-v2-tiny-nli: max |logit - golden| = %.3g\n", worst);
}

TEST(DebertaV2Golden, BatchInvariance) {
  const auto cases = read_cases();
  const auto encoder = load_fixture(2);
  std::vector<std::vector<float>> alone;
  for (const auto& c : cases) alone.push_back(run(*encoder, {&c}));
  std::mt19937 rng(7);
  std::uniform_int_distribution<std::size_t> pick(0, cases.size() - 1);
  double worst = 0;
  for (const std::size_t size : {2u, 7u, 32u}) {
    for (std::size_t target = 0; target < cases.size(); ++target) {
      // The case under test at a random slot, random others (repeats allowed) elsewhere.
      std::vector<std::size_t> members(size);
      for (auto& m : members) m = pick(rng);
      members[std::uniform_int_distribution<std::size_t>(0, size - 1)(rng)] = target;
      std::vector<const GoldenCase*> batch;
      for (const auto m : members) batch.push_back(&cases[m]);
      const auto logits = run(*encoder, batch);
      ASSERT_EQ(logits.size(), 3 * size);
      for (std::size_t slot = 0; slot < size; ++slot)
        for (int i = 0; i < 3; ++i) {
          const float diff = std::abs(logits[slot * 3 + i] - alone[members[slot]][i]);
          worst = std::max(worst, static_cast<double>(diff));
          ASSERT_LE(diff, 1e-5) << "batch " << size << " slot " << slot << " case "
                                << cases[members[slot]].id;
        }
    }
  }
  std::printf("batch invariance: max |batched - alone| = %.3g\n", worst);
}

TEST(DebertaV2Golden, RejectsBadInputs) {
  const auto encoder = load_fixture(1);
  ForwardOutput out;
  const std::vector<std::int32_t> outside = {1, 4224, 2};
  const std::vector<std::int32_t> negative = {1, -1, 2};
  const std::vector<std::int32_t> empty;
  const std::vector<std::int32_t> too_long(513, 5);
  for (const auto* ids : {&outside, &negative, &empty, &too_long}) {
    const std::vector<SequenceInput> batch = {{*ids, {}}};
    try {
      encoder->forward(batch, out);
      ADD_FAILURE() << "accepted a bad sequence of " << ids->size() << " ids";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::kInvalidInput) << e.what();
    }
  }
  // type_vocab_size is 0: token_type_ids are ignored, as transformers does.
  const std::vector<std::int32_t> ids = {1, 20, 30, 2};
  const std::vector<std::int32_t> types = {0, 0, 1, 1};
  ForwardOutput with_types;
  encoder->forward(std::vector<SequenceInput>{{ids, types}}, with_types);
  encoder->forward(std::vector<SequenceInput>{{ids, {}}}, out);
  EXPECT_EQ(with_types.logits, out.logits);
}

}  // namespace
}  // namespace onepass::model
