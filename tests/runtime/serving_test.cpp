// The runtime with fake models: outputs, batching across requests, truncation, bad inputs that
// fail alone.
#include <gtest/gtest.h>

#include <cmath>

#include "call.h"

namespace onepass::runtime {
namespace {

using namespace testing;

void expect_logits(const ItemOutput& out, const std::vector<std::int32_t>& ids,
                   const std::vector<std::int32_t>& types, int labels) {
  const auto expected = fake_logits(ids, types, labels);
  ASSERT_EQ(out.values.size(), expected.size());
  for (std::size_t i = 0; i < expected.size(); ++i) EXPECT_FLOAT_EQ(out.values[i], expected[i]);
  EXPECT_EQ(out.num_tokens, static_cast<int>(ids.size()));
}

TEST(Serving, ClientBatchItemsAreSeparateSequencesInOrder) {
  FakeWorld world;
  Runtime rt(fake_options(world));
  ASSERT_TRUE(rt.wait_ready(std::chrono::seconds(5)));
  InferenceRequest r = texts("nli", {"a man plays", "12 13 14 15", "x"});
  r.items.push_back(InferenceItem{"premise here", std::string("hypo"), false, {}, {}});
  Pending p = submit(rt, r);
  const InferenceResult result = p.get();
  ASSERT_FALSE(result.error);
  ASSERT_EQ(result.items.size(), 4u);
  expect_logits(result.items[0], encoded("a man plays"), std::vector<std::int32_t>(5, 0), 3);
  expect_logits(result.items[1], {1, 12, 13, 14, 15, 2}, std::vector<std::int32_t>(6, 0), 3);
  expect_logits(result.items[2], {1, 101, 2}, {0, 0, 0}, 3);
  // Pair: [CLS] A [SEP] B [SEP], type ids 0 0 0 0 1 1.
  expect_logits(result.items[3], {1, 107, 104, 2, 104, 2}, {0, 0, 0, 0, 1, 1}, 3);
  EXPECT_EQ(result.total_tokens, 5u + 6u + 3u + 6u);
  EXPECT_GT(result.timings.total.count(), 0);
  EXPECT_LE(result.timings.inference, result.timings.total);
  EXPECT_EQ(*p.calls, 1);
}

TEST(Serving, EmbedderPoolsOverRealTokensAndReturnsTokenStates) {
  FakeWorld world;
  Runtime rt(fake_options(world));
  const std::vector<std::int32_t> seq = {1, 40, 50, 2};
  InferenceRequest mean = ids("embed", {seq});
  mean.output = OutputKind::kPooled;
  InferenceRequest cls = mean;
  cls.pooling = Pooling::kCls;
  InferenceRequest tokens = mean;
  tokens.output = OutputKind::kTokens;
  Pending pm = submit(rt, mean), pc = submit(rt, cls), pt = submit(rt, tokens);
  const std::size_t hidden = 64;
  ASSERT_FALSE(pm.get().error);
  ASSERT_EQ(pm.get().items[0].values.size(), hidden);
  for (std::size_t h = 0; h < hidden; ++h) {
    double sum = 0;
    for (std::size_t t = 0; t < seq.size(); ++t) sum += fake_hidden(seq[t], t, h);
    EXPECT_FLOAT_EQ(pm.get().items[0].values[h], static_cast<float>(sum / seq.size()));
    EXPECT_FLOAT_EQ(pc.get().items[0].values[h], fake_hidden(seq[0], 0, h));
    for (std::size_t t = 0; t < seq.size(); ++t) {
      EXPECT_FLOAT_EQ(pt.get().items[0].values[t * hidden + h], fake_hidden(seq[t], t, h));
    }
  }
  EXPECT_EQ(pt.get().items[0].values.size(), seq.size() * hidden);
}

TEST(Serving, WrongOutputForTheTaskIsRefusedBeforeAdmission) {
  FakeWorld world;
  Runtime rt(fake_options(world));
  InferenceRequest r = texts("nli", {"a"});
  r.output = OutputKind::kPooled;
  EXPECT_EQ(thrown_kind([&] { submit(rt, r); }), ErrorKind::kInvalidArgument);
  r = texts("embed", {"a"});
  EXPECT_EQ(thrown_kind([&] { submit(rt, r); }), ErrorKind::kInvalidArgument);
  EXPECT_EQ(thrown_kind([&] { submit(rt, texts("nli", {})); }), ErrorKind::kInvalidArgument);
  EXPECT_EQ(metric(rt, "onepass_inflight_requests"), 0);
}

TEST(Serving, RequestsFromManyThreadsMergeIntoBatchesAndKeepTheirOwnAnswers) {
  FakeWorld world;
  world.forward_gate.close();
  RuntimeOptions o = fake_options(world);
  o.max_batch_requests = 16;
  Runtime rt(o);
  ASSERT_TRUE(rt.wait_ready(std::chrono::seconds(5)));
  constexpr int kThreads = 4, kPerThread = 40;
  std::vector<std::vector<Pending>> pending(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kPerThread; ++i) {
        const int id = 20 + t * kPerThread + i;
        // Different lengths, and every fourth request a client batch of two.
        std::vector<std::vector<std::int32_t>> inputs = {std::vector<std::int32_t>(1 + i % 5, id)};
        if (i % 4 == 0) inputs.push_back({1, id, id, 2});
        pending[t].push_back(submit(rt, ids("nli", inputs)));
      }
    });
  }
  for (auto& th : threads) th.join();
  // All inputs but the held batch are queued: the next batches must merge requests.
  const int total_inputs = kThreads * (kPerThread + kPerThread / 4);
  ASSERT_TRUE(eventually([&] {
    auto log = world.batch_log();
    return log.size() == 1 && metric(rt, "onepass_batch_queue_depth", {{"model", "nli"}}) ==
                                  total_inputs - static_cast<double>(log[0].lengths.size());
  }));
  world.forward_gate.open();
  for (int t = 0; t < kThreads; ++t) {
    for (int i = 0; i < kPerThread; ++i) {
      const InferenceResult r = pending[t][i].get();
      ASSERT_FALSE(r.error);
      const int id = 20 + t * kPerThread + i;
      std::vector<std::int32_t> seq(1 + i % 5, id);
      expect_logits(r.items[0], seq, std::vector<std::int32_t>(seq.size(), 0), 3);
      if (i % 4 == 0) expect_logits(r.items[1], {1, id, id, 2}, {0, 0, 0, 0}, 3);
      EXPECT_EQ(*pending[t][i].calls, 1);
    }
  }
  std::size_t sequences = 0, largest = 0;
  for (const auto& b : world.batch_log()) {
    sequences += b.lengths.size();
    largest = std::max(largest, b.lengths.size());
    EXPECT_LE(b.lengths.size(), 16u);
  }
  EXPECT_EQ(sequences, static_cast<std::size_t>(total_inputs));
  EXPECT_EQ(largest, 16u);
  EXPECT_EQ(metric(rt, "onepass_inputs_total", {{"model", "nli"}}), total_inputs);
}

TEST(Serving, TokenBudgetBoundsEveryBatch) {
  FakeWorld world;
  world.forward_gate.close();
  RuntimeOptions o = fake_options(world);
  o.max_batch_tokens = 20;
  Runtime rt(o);
  ASSERT_TRUE(rt.wait_ready(std::chrono::seconds(5)));
  std::vector<Pending> pending;
  for (int i = 0; i < 30; ++i) {
    pending.push_back(submit(rt, ids("nli", {std::vector<std::int32_t>(3 + i % 7, 30 + i)})));
  }
  ASSERT_TRUE(eventually([&] { return world.forward_gate.blocked() == 1; }));
  world.forward_gate.open();
  for (auto& p : pending) ASSERT_FALSE(p.get().error);
  for (const auto& b : world.batch_log()) {
    std::size_t tokens = 0;
    for (auto n : b.lengths) tokens += n;
    EXPECT_LE(tokens, 20u);
  }
}

TEST(Serving, TruncationFollowsTheRequestAndTheOption) {
  FakeWorld world;
  RuntimeOptions o = fake_options(world);
  o.max_input_length = 8;
  Runtime rt(o);
  const std::string ten_words = "10 11 12 13 14 15 16 17 18 19";  // 12 tokens with specials

  std::string message;
  const InferenceResult refused = submit(rt, texts("nli", {ten_words})).get();
  EXPECT_EQ(result_error(refused, &message), ErrorKind::kInvalidInput);
  EXPECT_NE(message.find("12"), std::string::npos) << message;
  EXPECT_NE(message.find("8"), std::string::npos) << message;

  InferenceRequest truncated = texts("nli", {ten_words});
  truncated.truncate = true;
  const InferenceResult served = submit(rt, truncated).get();
  ASSERT_FALSE(served.error);
  expect_logits(served.items[0], {1, 10, 11, 12, 13, 14, 15, 2}, std::vector<std::int32_t>(8, 0),
                3);

  truncated.truncation_direction = tokenizer::TruncationDirection::kLeft;
  truncated.max_length = 5;  // tighter than the model's limit
  const InferenceResult left = submit(rt, truncated).get();
  ASSERT_FALSE(left.error);
  expect_logits(left.items[0], {1, 17, 18, 19, 2}, std::vector<std::int32_t>(5, 0), 3);

  // Pre-tokenized ids are cut as given.
  InferenceRequest long_ids = ids("nli", {std::vector<std::int32_t>(20, 30)});
  EXPECT_EQ(result_error(submit(rt, long_ids).get()), ErrorKind::kInvalidInput);
  long_ids.truncate = true;
  const InferenceResult cut = submit(rt, long_ids).get();
  ASSERT_FALSE(cut.error);
  EXPECT_EQ(cut.items[0].num_tokens, 8);

  o.auto_truncate = true;
  Runtime forced(o);
  const InferenceResult auto_cut = submit(forced, texts("nli", {ten_words})).get();
  ASSERT_FALSE(auto_cut.error);
  EXPECT_EQ(auto_cut.items[0].num_tokens, 8);
}

TEST(Serving, PreTokenizedInputsAreValidated) {
  FakeWorld world;
  Runtime rt(fake_options(world));
  std::string message;
  EXPECT_EQ(result_error(submit(rt, ids("nli", {{1, 2600, 2}})).get(), &message),
            ErrorKind::kInvalidInput);
  EXPECT_NE(message.find("2600"), std::string::npos);
  EXPECT_EQ(result_error(submit(rt, ids("nli", {{1, -3, 2}})).get()), ErrorKind::kInvalidInput);
  EXPECT_EQ(result_error(submit(rt, ids("nli", {{}})).get()), ErrorKind::kInvalidInput);
  InferenceRequest types = ids("nli", {{1, 5, 2}});
  types.items[0].token_type_ids = {0, 1};
  EXPECT_EQ(result_error(submit(rt, types).get()), ErrorKind::kInvalidInput);
  types.items[0].token_type_ids = {0, 2, 0};  // type_vocab_size 2
  EXPECT_EQ(result_error(submit(rt, types).get()), ErrorKind::kInvalidInput);
  types.items[0].token_type_ids = {0, 1, 1};
  const InferenceResult ok = submit(rt, types).get();
  ASSERT_FALSE(ok.error);
  expect_logits(ok.items[0], {1, 5, 2}, {0, 1, 1}, 3);
  // No work reached the engine for the refused ones.
  EXPECT_EQ(world.forwards.load(), 1);
}

TEST(Serving, BadItemsFailAloneWithoutDisturbingTheirBatch) {
  FakeWorld world;
  world.forward_gate.close();
  Runtime rt(fake_options(world));
  ASSERT_TRUE(rt.wait_ready(std::chrono::seconds(5)));
  Pending warm = submit(rt, ids("nli", {{1, 9, 2}}));  // holds the compute thread
  ASSERT_TRUE(world.forward_gate.wait_blocked(1));
  Pending good1 = submit(rt, ids("nli", {{1, 30, 31, 2}}));
  Pending out_of_vocab = submit(rt, ids("nli", {{1, 99999, 2}}));
  Pending nan = submit(rt, ids("nli", {{1, 40, 2}, {1, kNanId, 2}}));
  Pending good2 = submit(rt, texts("nli", {"hello there world"}));
  ASSERT_TRUE(eventually([&] {
    return metric(rt, "onepass_batch_queue_depth", {{"model", "nli"}}) == 4;  // 1 + 2 + 1
  }));
  world.forward_gate.open();

  ASSERT_FALSE(good1.get().error);
  expect_logits(good1.get().items[0], {1, 30, 31, 2}, {0, 0, 0, 0}, 3);
  ASSERT_FALSE(good2.get().error);
  expect_logits(good2.get().items[0], encoded("hello there world"), {0, 0, 0, 0, 0}, 3);
  EXPECT_EQ(result_error(out_of_vocab.get()), ErrorKind::kInvalidInput);
  EXPECT_EQ(result_error(nan.get()), ErrorKind::kBackend);
  EXPECT_TRUE(nan.get().items.empty());
  for (const Pending* p : {&warm, &good1, &out_of_vocab, &nan, &good2}) {
    EXPECT_EQ(*p->calls, 1);
  }
  // The NaN input shared a forward pass with the good ones (it ran, and they were fine).
  bool shared = false;
  for (const auto& b : world.batch_log()) {
    bool has_nan = false, has_good = false;
    for (auto first : b.first_ids) {
      has_nan |= first == kNanId;
      has_good |= first == 30;
    }
    shared |= has_nan && has_good;
  }
  EXPECT_TRUE(shared);
}

TEST(Serving, ABatchTheEngineRefusesIsRerunItemByItem) {
  FakeWorld world;
  world.forward_gate.close();
  Runtime rt(fake_options(world));
  ASSERT_TRUE(rt.wait_ready(std::chrono::seconds(5)));
  Pending warm = submit(rt, ids("nli", {{1, 9, 2}}));
  ASSERT_TRUE(world.forward_gate.wait_blocked(1));
  Pending good1 = submit(rt, ids("nli", {{1, 30, 2}}));
  Pending refused = submit(rt, ids("nli", {{1, kThrowId, 2}, {1, 31, 2}}));
  Pending good2 = submit(rt, ids("nli", {{1, 32, 33, 2}}));
  ASSERT_TRUE(eventually([&] {
    return metric(rt, "onepass_batch_queue_depth", {{"model", "nli"}}) == 4;
  }));
  world.forward_gate.open();
  ASSERT_FALSE(good1.get().error);
  expect_logits(good1.get().items[0], {1, 30, 2}, {0, 0, 0}, 3);
  ASSERT_FALSE(good2.get().error);
  expect_logits(good2.get().items[0], {1, 32, 33, 2}, {0, 0, 0, 0}, 3);
  EXPECT_EQ(result_error(refused.get()), ErrorKind::kInvalidInput);
  EXPECT_EQ(*refused.calls, 1);
}

TEST(Serving, TokenizeUsesTheModelsTokenizer) {
  FakeWorld world;
  Runtime rt(fake_options(world));
  ASSERT_TRUE(rt.wait_ready(std::chrono::seconds(5)));
  auto e = rt.tokenize("nli", "ab 77", std::string_view("c"), true);
  EXPECT_EQ(e.ids, (std::vector<std::int32_t>{1, 102, 77, 2, 101, 2}));
  e = rt.tokenize("nli", "ab 77", std::nullopt, false);
  EXPECT_EQ(e.ids, (std::vector<std::int32_t>{102, 77}));
  EXPECT_EQ(thrown_kind([&] { rt.tokenize("nope", "a", std::nullopt, true); }),
            ErrorKind::kNotFound);
}

// A request whose deadline passes while it waits is answered kDeadlineExceeded and never
// reaches the model: one already late when a tokenizer thread takes it, one that expires in
// the batcher behind a forward pass held at the gate. The request beside them without a
// deadline is served.
TEST(Serving, ARequestPastItsDeadlineIsDroppedBeforeItsForwardPass) {
  FakeWorld world;
  world.forward_gate.close();
  Runtime rt(fake_options(world));
  ASSERT_TRUE(rt.wait_ready(std::chrono::seconds(5)));
  Pending warm = submit(rt, ids("nli", {{1, 9, 2}}));  // holds the compute thread
  ASSERT_TRUE(world.forward_gate.wait_blocked(1));
  InferenceRequest late = ids("nli", {{1, 57, 2}});
  late.deadline = std::chrono::steady_clock::now() - std::chrono::milliseconds(1);
  InferenceRequest soon = ids("nli", {{1, 55, 2}, {1, 58, 2}});
  soon.deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(50);
  InferenceRequest open = ids("nli", {{1, 56, 2}});
  open.deadline = std::chrono::steady_clock::now() + std::chrono::hours(1);
  Pending p_late = submit(rt, late);
  Pending p_soon = submit(rt, soon);
  Pending p_open = submit(rt, open);
  // The late one is answered without waiting for the gate; the others wait for a batch.
  ASSERT_TRUE(p_late.done(5000));
  ASSERT_TRUE(eventually([&] {
    return metric(rt, "onepass_batch_queue_depth", {{"model", "nli"}}) == 3;
  }));
  std::this_thread::sleep_until(*soon.deadline + std::chrono::milliseconds(5));
  world.forward_gate.open();

  std::string message;
  EXPECT_EQ(result_error(p_late.get(), &message), ErrorKind::kDeadlineExceeded);
  EXPECT_NE(message.find("deadline"), std::string::npos);
  EXPECT_EQ(result_error(p_soon.get()), ErrorKind::kDeadlineExceeded);
  EXPECT_TRUE(p_soon.get().items.empty());
  ASSERT_FALSE(p_open.get().error);
  expect_logits(p_open.get().items[0], {1, 56, 2}, {0, 0, 0}, 3);
  ASSERT_FALSE(warm.get().error);
  for (const Pending* p : {&warm, &p_late, &p_soon, &p_open}) EXPECT_EQ(*p->calls, 1);
  for (const auto& b : world.batch_log()) {
    for (auto first : b.first_ids) {
      EXPECT_NE(first, 55);
      EXPECT_NE(first, 57);
      EXPECT_NE(first, 58);
    }
  }
  EXPECT_EQ(metric(rt, "onepass_expired_requests_total", {{"model", "nli"}}), 2);
  EXPECT_EQ(metric(rt, "onepass_failed_requests_total", {{"model", "nli"}}), 2);
  EXPECT_EQ(metric(rt, "onepass_queue_depth", {{"model", "nli"}}), 0);
}

TEST(Serving, MetricsAfterTrafficAreValid) {
  FakeWorld world;
  Runtime rt(fake_options(world));
  ASSERT_TRUE(rt.wait_ready(std::chrono::seconds(5)));
  ASSERT_FALSE(submit(rt, texts("nli", {"a b", "c"})).get().error);
  ASSERT_TRUE(submit(rt, ids("nli", {{1, 99999, 2}})).get().error);
  rt.record_http_request("/predict", "nli", 200, std::chrono::milliseconds(2));
  std::vector<Sample> s;
  const auto problems = check_prometheus_text(rt.render_metrics(), &s);
  ASSERT_TRUE(problems.empty()) << problems.front();
  EXPECT_EQ(sample_value(s, "onepass_inputs_total", {{"model", "nli"}}), 2);
  EXPECT_EQ(sample_value(s, "onepass_tokens_total", {{"model", "nli"}}), 4 + 3);
  EXPECT_EQ(sample_value(s, "onepass_failed_requests_total", {{"model", "nli"}}), 1);
  EXPECT_EQ(sample_value(s, "onepass_loaded_models"), 3);
  EXPECT_EQ(sample_value(s, "onepass_requests_total", {{"route", "/predict"}}), 1);
  EXPECT_EQ(sample_value(s, "onepass_batch_size_inputs_count", {{"model", "nli"}}), 1);
}

}  // namespace
}  // namespace onepass::runtime
