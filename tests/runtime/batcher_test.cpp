// The batching policy alone, driven by a fake clock.
#include "runtime/batcher.h"

#include <gtest/gtest.h>

namespace onepass::runtime {
namespace {

using namespace std::chrono_literals;
using TimePoint = Batcher<int>::TimePoint;

const TimePoint t0 = TimePoint{} + 1h;

std::vector<int> items_of(const Batcher<int>::Batch& b) { return b.items; }

TEST(Batcher, EmptyHasNothingAndNoWake) {
  Batcher<int> batcher({100, 10, 0ns});
  TimePoint wake{};
  EXPECT_FALSE(batcher.next(t0, &wake));
  EXPECT_EQ(wake, TimePoint::max());
}

TEST(Batcher, TakesQueuedInOrderWithinTokenBudget) {
  Batcher<int> batcher({100, 10, 0ns});
  batcher.push(1, 0, 40, t0);
  batcher.push(1, 1, 50, t0);
  batcher.push(1, 2, 20, t0);  // 40 + 50 + 20 > 100: waits for the next batch
  batcher.push(1, 3, 5, t0);   // would fit, but order is kept
  auto b = batcher.next(t0);
  ASSERT_TRUE(b);
  EXPECT_EQ(items_of(*b), (std::vector<int>{0, 1}));
  EXPECT_EQ(b->tokens, 90u);
  b = batcher.next(t0);
  ASSERT_TRUE(b);
  EXPECT_EQ(items_of(*b), (std::vector<int>{2, 3}));
  EXPECT_EQ(b->tokens, 25u);
  EXPECT_TRUE(batcher.empty());
}

TEST(Batcher, ExactBudgetFitsAndItemCountBounds) {
  Batcher<int> batcher({100, 3, 0ns});
  for (int i = 0; i < 5; ++i) batcher.push(1, i, 25, t0);
  auto b = batcher.next(t0);
  ASSERT_TRUE(b);
  EXPECT_EQ(b->items.size(), 3u);  // count bound (75 tokens < 100)
  b = batcher.next(t0);
  ASSERT_TRUE(b);
  EXPECT_EQ(items_of(*b), (std::vector<int>{3, 4}));

  Batcher<int> exact({100, 10, 0ns});
  for (int i = 0; i < 5; ++i) exact.push(1, i, 25, t0);
  b = exact.next(t0);
  ASSERT_TRUE(b);
  EXPECT_EQ(b->items.size(), 4u);  // 4 x 25 == 100 fits exactly
  EXPECT_EQ(b->tokens, 100u);
}

TEST(Batcher, InputLongerThanBudgetRunsAlone) {
  Batcher<int> batcher({100, 10, 0ns});
  batcher.push(1, 0, 10, t0);
  batcher.push(1, 1, 300, t0);
  batcher.push(1, 2, 10, t0);
  auto b = batcher.next(t0);
  EXPECT_EQ(items_of(*b), (std::vector<int>{0}));
  b = batcher.next(t0);
  EXPECT_EQ(items_of(*b), (std::vector<int>{1}));
  EXPECT_EQ(b->tokens, 300u);
  b = batcher.next(t0);
  EXPECT_EQ(items_of(*b), (std::vector<int>{2}));
}

TEST(Batcher, MaxWaitHoldsAPartialBatchUntilDue) {
  Batcher<int> batcher({100, 4, 5ms});
  batcher.push(1, 0, 10, t0);
  TimePoint wake{};
  EXPECT_FALSE(batcher.next(t0 + 1ms, &wake));
  EXPECT_EQ(wake, t0 + 5ms);
  batcher.push(1, 1, 10, t0 + 2ms);
  EXPECT_FALSE(batcher.next(t0 + 4ms, &wake));
  EXPECT_EQ(wake, t0 + 5ms);  // the oldest input decides
  auto b = batcher.next(t0 + 5ms);
  ASSERT_TRUE(b);
  EXPECT_EQ(items_of(*b), (std::vector<int>{0, 1}));
}

TEST(Batcher, MaxWaitEndsEarlyOnAFullBatch) {
  Batcher<int> tokens_full({30, 10, 1s});
  for (int i = 0; i < 3; ++i) tokens_full.push(1, i, 10, t0);
  auto b = tokens_full.next(t0);
  ASSERT_TRUE(b);
  EXPECT_EQ(b->items.size(), 3u);

  Batcher<int> count_full({1000, 2, 1s});
  count_full.push(1, 0, 10, t0);
  EXPECT_FALSE(count_full.next(t0));
  count_full.push(1, 1, 10, t0);
  b = count_full.next(t0);
  ASSERT_TRUE(b);
  EXPECT_EQ(b->items.size(), 2u);
}

TEST(Batcher, RoundRobinAcrossQueuesSoAFloodCannotStarve) {
  Batcher<int> batcher({1000, 2, 0ns});
  for (int i = 0; i < 20; ++i) batcher.push(1, 100 + i, 10, t0);  // model 1 floods
  batcher.push(2, 200, 10, t0);
  batcher.push(3, 300, 10, t0);
  std::vector<std::uint64_t> order;
  while (auto b = batcher.next(t0)) order.push_back(b->queue);
  // 1, 2, 3, then model 1's remaining 9 batches.
  ASSERT_EQ(order.size(), 12u);
  EXPECT_EQ(order[0], 1u);
  EXPECT_EQ(order[1], 2u);
  EXPECT_EQ(order[2], 3u);
  for (std::size_t i = 3; i < order.size(); ++i) EXPECT_EQ(order[i], 1u);
}

TEST(Batcher, RoundRobinAlternatesBetweenTwoBusyQueues) {
  Batcher<int> batcher({1000, 1, 0ns});
  for (int i = 0; i < 3; ++i) {
    batcher.push(5, i, 1, t0);
    batcher.push(9, 10 + i, 1, t0);
  }
  std::vector<int> order;
  while (auto b = batcher.next(t0)) order.push_back(b->items[0]);
  EXPECT_EQ(order, (std::vector<int>{0, 10, 1, 11, 2, 12}));
}

// One compute thread serves every model: while another model has traffic, a batch is cut to
// about max_turn of compute by the model's measured cost per token.
TEST(Batcher, ATurnIsCutToMaxTurnOfComputeWhileAnotherModelHasTraffic) {
  Batcher<int> batcher({16384, 256, 0ns, 100ms});
  batcher.record_cost(1, 100, 100ms);  // model 1: 1 ms per token
  for (int i = 0; i < 40; ++i) batcher.push(1, i, 30, t0);
  // Alone, model 1 takes everything queued in one batch.
  auto b = batcher.next(t0);
  ASSERT_TRUE(b);
  EXPECT_EQ(b->items.size(), 40u);

  for (int i = 0; i < 40; ++i) batcher.push(1, i, 30, t0);
  batcher.push(2, 99, 5, t0);  // model 2 has traffic: model 1's turn is 100 tokens
  b = batcher.next(t0);
  ASSERT_TRUE(b);
  EXPECT_EQ(b->queue, 2u);  // round robin: model 1 was served last
  b = batcher.next(t0);
  ASSERT_TRUE(b);
  EXPECT_EQ(b->queue, 1u);
  EXPECT_EQ(b->tokens, 90u);  // three inputs of 30; a fourth would pass 100
  // Model 2 went quiet kCoHostedWindow ago: model 1 is alone again.
  b = batcher.next(t0 + kCoHostedWindow + 1ms);
  ASSERT_TRUE(b);
  EXPECT_EQ(b->items.size(), 37u);

  // Model 1 quiet too, nothing queued: its cost is forgotten, and its first batch back is whole
  // even beside model 2's traffic.
  const TimePoint later = t0 + 3 * kCoHostedWindow;
  EXPECT_FALSE(batcher.next(later));
  batcher.push(2, 98, 5, later);
  for (int i = 0; i < 10; ++i) batcher.push(1, i, 30, later);
  std::size_t model_1_items = 0;
  while (auto next = batcher.next(later)) {
    if (next->queue == 1u) model_1_items = next->items.size();
  }
  EXPECT_EQ(model_1_items, 10u);
}

TEST(Batcher, ATurnKeepsOneInputLongerThanItAndMaxTurnZeroNeverCuts) {
  Batcher<int> batcher({16384, 256, 0ns, 10ms});
  batcher.record_cost(1, 10, 100ms);  // 10 ms per token: the turn is one token
  batcher.push(2, 99, 5, t0);
  batcher.push(1, 0, 500, t0);
  batcher.push(1, 1, 500, t0);
  auto b = batcher.next(t0);
  ASSERT_TRUE(b);
  EXPECT_EQ(b->queue, 1u);
  EXPECT_EQ(b->items, (std::vector<int>{0}));  // progress: at least one input

  Batcher<int> uncut({16384, 256, 0ns, 0ns});
  uncut.record_cost(1, 10, 100ms);
  uncut.push(2, 99, 5, t0);
  for (int i = 0; i < 5; ++i) uncut.push(1, i, 500, t0);
  b = uncut.next(t0);
  ASSERT_TRUE(b);
  EXPECT_EQ(b->items.size(), 5u);
}

TEST(Batcher, RecordedCostIsAMovingAverage) {
  Batcher<int> batcher({16384, 256, 0ns, 100ms});
  batcher.record_cost(1, 100, 100ms);  // 1 ms per token
  batcher.record_cost(1, 100, 500ms);  // 5 ms: the average moves to 2 ms per token
  batcher.push(2, 99, 5, t0);
  for (int i = 0; i < 100; ++i) batcher.push(1, i, 1, t0);
  const auto b = batcher.next(t0);
  ASSERT_TRUE(b);
  EXPECT_EQ(b->queue, 1u);
  EXPECT_EQ(b->tokens, 50u);
}

TEST(Batcher, ADueQueueIsServedWhileAnotherStillWaits) {
  Batcher<int> batcher({1000, 10, 10ms});
  batcher.push(1, 1, 10, t0);
  batcher.push(2, 2, 10, t0 + 8ms);
  auto b = batcher.next(t0 + 10ms);
  ASSERT_TRUE(b);
  EXPECT_EQ(b->queue, 1u);
  TimePoint wake{};
  EXPECT_FALSE(batcher.next(t0 + 10ms, &wake));
  EXPECT_EQ(wake, t0 + 18ms);
}

TEST(Batcher, RemoveIfDropsItemsAndTheirTokens) {
  Batcher<int> batcher({1000, 10, 0ns});
  for (int i = 0; i < 6; ++i) batcher.push(i % 2 + 1, i, 10 + i, t0);
  auto removed = batcher.remove_if([](int v) { return v % 3 == 0; });
  EXPECT_EQ(removed, (std::vector<int>{0, 3}));
  EXPECT_EQ(batcher.total_items(), 4u);
  EXPECT_EQ(batcher.queued_tokens(1), 12u + 14u);
  EXPECT_EQ(batcher.queued_tokens(2), 11u + 15u);
}

}  // namespace
}  // namespace onepass::runtime
