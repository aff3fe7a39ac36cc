// A sequence's output must not depend on what else is in its batch: every golden case alone,
// then inside batches of 2, 7 and 32 at a random slot with random other cases in every other
// slot, within 1e-5 (logits, every token's logits, or every hidden-state row and the pooler
// output). Every member of a batch is checked, so one shuffle of the cases cut into batches
// puts each case in one batch of that size; kShuffles of them give each case that many random
// slots and neighbours per size. (A batch per case and size checked each case in some 41
// batches, most of them of 32: ten times the forward passes for the same comparison, and the
// longest test of the sanitized suite.)
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <random>
#include <thread>

#include "model/encoder.h"
#include "tests/model/golden.h"

namespace onepass::model {
namespace {

using onepass::testing::fixture_model_dir;
using onepass::testing::load_golden;

// The rows sequence `index` owns in `out`, whatever the head.
std::vector<float> sequence_output(const ModelInfo& info, const ForwardOutput& out,
                                   std::size_t index) {
  if (info.head == HeadKind::kSequenceClassification) {
    const auto n = static_cast<std::size_t>(info.num_labels);
    return {out.logits.begin() + index * n, out.logits.begin() + (index + 1) * n};
  }
  if (per_token_head(info.head)) {
    const auto n = static_cast<std::size_t>(info.num_labels);
    return {out.logits.begin() + out.token_offsets[index] * n,
            out.logits.begin() + out.token_offsets[index + 1] * n};
  }
  if (info.head == HeadKind::kMaskedLm) {
    const auto n = static_cast<std::size_t>(info.vocab_size);
    return {out.logits.begin() + index * n, out.logits.begin() + (index + 1) * n};
  }
  const auto h = static_cast<std::size_t>(info.hidden_size);
  std::vector<float> v(out.hidden_states.begin() + out.token_offsets[index] * h,
                       out.hidden_states.begin() + out.token_offsets[index + 1] * h);
  if (!out.pooler_output.empty()) {
    v.insert(v.end(), out.pooler_output.begin() + index * h,
             out.pooler_output.begin() + (index + 1) * h);
  }
  return v;
}

class BatchInvariance : public ::testing::TestWithParam<std::string> {};

TEST_P(BatchInvariance, AloneEqualsInsideMixedBatches) {
  const auto golden = load_golden(GetParam());
  const auto encoder = load_encoder(fixture_model_dir(GetParam()));
  const auto& info = encoder->info();
  const std::size_t cases = golden.cases.size();

  std::vector<std::vector<float>> alone(cases);
  ForwardOutput out;
  for (std::size_t c = 0; c < cases; ++c) {
    const auto input = golden.cases[c].input();
    encoder->forward(std::span(&input, 1), out);
    alone[c] = sequence_output(info, out, 0);
  }

  constexpr int kShuffles = 3;
  std::mt19937 rng(1234);
  std::uniform_int_distribution<std::size_t> pick(0, cases - 1);
  std::vector<std::size_t> order(cases);
  float worst = 0.0f;
  for (const std::size_t batch_size : {2u, 7u, 32u}) {
    for (int shuffle = 0; shuffle < kShuffles; ++shuffle) {
      for (std::size_t c = 0; c < cases; ++c) order[c] = c;
      std::shuffle(order.begin(), order.end(), rng);
      for (std::size_t first = 0; first < cases; first += batch_size) {
        // The shuffle's next batch_size cases; the last batch topped up with random ones.
        std::vector<std::size_t> members(batch_size);
        for (std::size_t i = 0; i < batch_size; ++i)
          members[i] = first + i < cases ? order[first + i] : pick(rng);
        std::vector<SequenceInput> batch;
        for (const auto m : members) batch.push_back(golden.cases[m].input());
        encoder->forward(batch, out);
        for (std::size_t i = 0; i < batch_size; ++i) {
          const auto got = sequence_output(info, out, i);
          const auto& expected = alone[members[i]];
          ASSERT_EQ(got.size(), expected.size());
          for (std::size_t k = 0; k < got.size(); ++k)
            worst = std::max(worst, std::abs(got[k] - expected[k]));
          ASSERT_LE(worst, 1e-5f) << "batch of " << batch_size << " holding case "
                                  << golden.cases[members[i]].id << " at slot " << i;
        }
      }
    }
  }
  std::printf("[%s] batched vs alone: max abs diff %.3g\n", GetParam().c_str(), worst);
}

// forward() is const and shared: four threads running different batches at once must each get
// exactly what a lone run gives. (This caught oneDNN's shared library-managed scratchpad; the
// matmul primitives now take a per-thread user scratchpad.)
TEST_P(BatchInvariance, ConcurrentThreadsShareOneEncoder) {
  const auto golden = load_golden(GetParam());
  const auto encoder =
      load_encoder(fixture_model_dir(GetParam()), LoadOptions{1, Precision::kFp32});
  const auto& info = encoder->info();
  std::vector<std::vector<float>> alone(golden.cases.size());
  ForwardOutput out;
  for (std::size_t c = 0; c < golden.cases.size(); ++c) {
    const auto input = golden.cases[c].input();
    encoder->forward(std::span(&input, 1), out);
    alone[c] = sequence_output(info, out, 0);
  }
  std::atomic<int> mismatches{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      ForwardOutput local;
      for (int round = 0; round < 5; ++round) {
        std::vector<std::size_t> members;
        for (std::size_t c = static_cast<std::size_t>(t + round) % 3; c < golden.cases.size();
             c += 3)
          members.push_back(c);
        std::vector<SequenceInput> batch;
        for (const auto m : members) batch.push_back(golden.cases[m].input());
        encoder->forward(batch, local);
        for (std::size_t i = 0; i < members.size(); ++i) {
          const auto got = sequence_output(info, local, i);
          if (got != alone[members[i]]) {
            float worst = 0;
            for (std::size_t k = 0; k < got.size(); ++k)
              worst = std::max(worst, std::abs(got[k] - alone[members[i]][k]));
            std::printf("thread %d, round %d, case %zu: max abs diff %g\n", t, round, members[i],
                        worst);
            ++mismatches;
          }
        }
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(mismatches.load(), 0);
}

INSTANTIATE_TEST_SUITE_P(Fixtures, BatchInvariance,
                         ::testing::ValuesIn(onepass::testing::golden_models()),
                         [](const auto& info) {
                           return onepass::testing::fixture_test_name(info.param);
                         });

}  // namespace
}  // namespace onepass::model
