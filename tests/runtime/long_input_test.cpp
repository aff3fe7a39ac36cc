// Long inputs split into windows (LongInput::kChunk) through the whole runtime with fake models:
// which tokens each window holds (written out by hand from the documented rule), the
// combination of the windows' outputs against the fake model's formulas and against each window
// run as its own request, the default refusal, the window limit, and a short request served
// between a long document's windows.
#include <gtest/gtest.h>

#include <numeric>
#include <string>

#include "call.h"
#include "tests/runtime/window_oracle.h"

namespace onepass::runtime {
namespace {

using namespace testing;
using onepass::testing::token_weighted_mean;

// "10 11 ... (10 + n - 1)": n words whose fake ids are their values.
std::string numbered_words(int n, int first = 10) {
  std::string text;
  for (int i = 0; i < n; ++i) {
    if (i) text += ' ';
    text += std::to_string(first + i);
  }
  return text;
}

std::vector<std::int32_t> range_ids(int begin, int end) {
  std::vector<std::int32_t> ids(static_cast<std::size_t>(end - begin));
  std::iota(ids.begin(), ids.end(), begin);
  return ids;
}

// [CLS] ids [SEP].
std::vector<std::int32_t> framed(const std::vector<std::int32_t>& ids) {
  std::vector<std::int32_t> out{kCls};
  out.insert(out.end(), ids.begin(), ids.end());
  out.push_back(kSep);
  return out;
}

InferenceRequest chunked(const std::string& model, const std::vector<std::string>& inputs,
                         std::optional<std::size_t> stride) {
  InferenceRequest r = texts(model, inputs);
  r.long_input = LongInput::kChunk;
  r.stride = stride;
  return r;
}

RuntimeOptions options_with_limit(FakeWorld& world, std::size_t max_input_length) {
  RuntimeOptions o = fake_options(world);
  o.max_input_length = max_input_length;
  return o;
}

TEST(LongInput, ChunkedLogitsAreTheTokenWeightedMeanOfTheWindows) {
  FakeWorld world;
  Runtime rt(options_with_limit(world, 8));
  // 20 tokens of text, windows of 8 = [CLS] + 6 + [SEP], overlap 2, so each starts 4 later:
  // [0,6) [4,10) [8,14) [12,18) [16,20).
  const std::vector<std::vector<std::int32_t>> windows = {
      framed(range_ids(10, 16)), framed(range_ids(14, 20)), framed(range_ids(18, 24)),
      framed(range_ids(22, 28)), framed(range_ids(26, 30))};
  const InferenceResult result = submit(rt, chunked("nli", {numbered_words(20)}, 2)).get();
  ASSERT_FALSE(result.error);
  const ItemOutput& item = result.items.at(0);
  ASSERT_EQ(item.windows.size(), windows.size());

  std::vector<std::vector<float>> expected_windows;
  std::vector<std::size_t> tokens;
  for (std::size_t w = 0; w < windows.size(); ++w) {
    expected_windows.push_back(
        fake_logits(windows[w], std::vector<std::int32_t>(windows[w].size(), 0), 3));
    tokens.push_back(windows[w].size());
    EXPECT_EQ(item.windows[w].num_tokens, static_cast<int>(windows[w].size()));
    // Each window run as its own short request gives the same logits.
    const InferenceResult alone = submit(rt, ids("nli", {windows[w]})).get();
    ASSERT_FALSE(alone.error);
    for (std::size_t l = 0; l < 3; ++l) {
      EXPECT_FLOAT_EQ(item.windows[w].values[l], expected_windows[w][l]);
      EXPECT_FLOAT_EQ(alone.items[0].values[l], expected_windows[w][l]);
    }
  }
  const auto combined = token_weighted_mean(expected_windows, tokens);
  for (std::size_t l = 0; l < 3; ++l) EXPECT_NEAR(item.values[l], combined[l], 1e-5);
  EXPECT_EQ(item.num_tokens, 8 + 8 + 8 + 8 + 6);
  EXPECT_EQ(result.total_tokens, 38u);
}

TEST(LongInput, PairsSplitTheFirstTextAndRepeatTheSecondWhole) {
  FakeWorld world;
  Runtime rt(options_with_limit(world, 8));
  InferenceRequest r = chunked("nli", {numbered_words(12)}, std::nullopt);
  r.items[0].text_pair = "5 6";
  // [CLS] A [SEP] 5 6 [SEP] leaves 3 tokens of A per window; default overlap 3 / 8 = 0.
  const InferenceResult result = submit(rt, r).get();
  ASSERT_FALSE(result.error);
  const ItemOutput& item = result.items.at(0);
  ASSERT_EQ(item.windows.size(), 4u);
  const std::vector<std::int32_t> types = {0, 0, 0, 0, 0, 1, 1, 1};
  for (int w = 0; w < 4; ++w) {
    const std::vector<std::int32_t> window = {kCls, 10 + 3 * w, 11 + 3 * w, 12 + 3 * w,
                                              kSep, 5,          6,          kSep};
    const auto expected = fake_logits(window, types, 3);
    for (std::size_t l = 0; l < 3; ++l) EXPECT_FLOAT_EQ(item.windows[w].values[l], expected[l]);
  }

  // A second text that leaves no room for the first is refused, naming the problem.
  r.items[0].text_pair = "5 6 7 8 9";
  std::string message;
  EXPECT_EQ(result_error(submit(rt, r).get(), &message), ErrorKind::kInvalidInput);
  EXPECT_NE(message.find("no room"), std::string::npos) << message;
}

// A reranker's pair (query, document): the document, second, is split and the query repeated
// whole; max_windows_per_item keeps the first windows only (Cohere's max_chunks_per_doc).
TEST(LongInput, ChunkingTheSecondTextRepeatsTheFirstAndCapsTheWindows) {
  FakeWorld world;
  Runtime rt(options_with_limit(world, 8));
  InferenceRequest r = chunked("nli", {"5 6"}, 1);
  r.items[0].text_pair = numbered_words(11);
  r.chunked_text = ChunkedText::kSecond;
  // [CLS] 5 6 [SEP] B [SEP] leaves 3 tokens of B per window; overlap 1, so each starts 2 later:
  // [0,3) [2,5) [4,7) [6,9) [8,11).
  const std::vector<std::int32_t> types = {0, 0, 0, 0, 1, 1, 1, 1};
  auto window = [](int begin) {
    return std::vector<std::int32_t>{kCls, 5, 6, kSep, begin, begin + 1, begin + 2, kSep};
  };
  const InferenceResult result = submit(rt, r).get();
  ASSERT_FALSE(result.error);
  const ItemOutput& item = result.items.at(0);
  ASSERT_EQ(item.windows.size(), 5u);
  for (int w = 0; w < 5; ++w) {
    const auto expected = fake_logits(window(10 + 2 * w), types, 3);
    for (std::size_t l = 0; l < 3; ++l) EXPECT_FLOAT_EQ(item.windows[w].values[l], expected[l]);
  }

  r.max_windows_per_item = 2;
  const InferenceResult capped = submit(rt, r).get();
  ASSERT_FALSE(capped.error);
  ASSERT_EQ(capped.items.at(0).windows.size(), 2u);
  for (int w = 0; w < 2; ++w) {
    const auto expected = fake_logits(window(10 + 2 * w), types, 3);
    for (std::size_t l = 0; l < 3; ++l)
      EXPECT_FLOAT_EQ(capped.items[0].windows[w].values[l], expected[l]);
  }
  EXPECT_EQ(capped.total_tokens, 16u);
  // One window left is no chunked input: its logits are the answer.
  r.max_windows_per_item = 1;
  const InferenceResult one = submit(rt, r).get();
  ASSERT_FALSE(one.error);
  EXPECT_TRUE(one.items.at(0).windows.empty());
  const auto first = fake_logits(window(10), types, 3);
  for (std::size_t l = 0; l < 3; ++l) EXPECT_FLOAT_EQ(one.items[0].values[l], first[l]);

  // A first text that leaves no room for the second is refused, naming it.
  r.items[0].text = "3 4 5 6 7";
  std::string message;
  EXPECT_EQ(result_error(submit(rt, r).get(), &message), ErrorKind::kInvalidInput);
  EXPECT_NE(message.find("no room for the second text"), std::string::npos) << message;
}

TEST(LongInput, DefaultIsUnchangedAndTruncationWins) {
  FakeWorld world;
  Runtime rt(options_with_limit(world, 8));
  const std::string text = numbered_words(20);  // 22 tokens with [CLS] and [SEP]

  std::string message;
  EXPECT_EQ(result_error(submit(rt, texts("nli", {text})).get(), &message),
            ErrorKind::kInvalidInput);
  EXPECT_NE(message.find("22 tokens"), std::string::npos) << message;

  // An explicit truncation is a truncation, whatever the policy says.
  InferenceRequest truncated = chunked("nli", {text}, std::nullopt);
  truncated.truncate = true;
  const InferenceResult cut = submit(rt, truncated).get();
  ASSERT_FALSE(cut.error);
  EXPECT_TRUE(cut.items[0].windows.empty());
  EXPECT_EQ(cut.items[0].num_tokens, 8);

  // An input that fits is one sequence, as before.
  const InferenceResult fits = submit(rt, chunked("nli", {"10 11 12"}, std::nullopt)).get();
  ASSERT_FALSE(fits.error);
  EXPECT_TRUE(fits.items[0].windows.empty());
  EXPECT_EQ(fits.items[0].num_tokens, 5);

  // Pre-tokenized ids are never split (their special tokens are the caller's).
  InferenceRequest long_ids = ids("nli", {std::vector<std::int32_t>(20, 30)});
  long_ids.long_input = LongInput::kChunk;
  EXPECT_EQ(result_error(submit(rt, long_ids).get()), ErrorKind::kInvalidInput);

  // Token-level outputs are never split either.
  InferenceRequest token_states = chunked("embed", {text}, std::nullopt);
  token_states.output = OutputKind::kTokens;
  EXPECT_EQ(result_error(submit(rt, token_states).get()), ErrorKind::kInvalidInput);

  // --auto-truncate yields to a request that asks for chunks.
  RuntimeOptions o = options_with_limit(world, 8);
  o.auto_truncate = true;
  Runtime auto_rt(o);
  const InferenceResult split = submit(auto_rt, chunked("nli", {text}, 2)).get();
  ASSERT_FALSE(split.error);
  EXPECT_EQ(split.items[0].windows.size(), 5u);
  EXPECT_EQ(submit(auto_rt, texts("nli", {text})).get().items.at(0).num_tokens, 8);
}

TEST(LongInput, BadStrideAndTooManyWindowsAreRefused) {
  FakeWorld world;
  RuntimeOptions o = options_with_limit(world, 8);
  o.max_windows_per_request = 4;
  Runtime rt(o);
  std::string message;
  EXPECT_EQ(result_error(submit(rt, chunked("nli", {numbered_words(20)}, 6)).get(), &message),
            ErrorKind::kInvalidInput);
  EXPECT_NE(message.find("stride 6"), std::string::npos) << message;

  // 5 windows > 4.
  EXPECT_EQ(result_error(submit(rt, chunked("nli", {numbered_words(20)}, 2)).get(), &message),
            ErrorKind::kInvalidInput);
  EXPECT_NE(message.find("5 windows"), std::string::npos) << message;
  // Three inputs of two windows each: 6 > 4, counted over the whole request.
  const std::string two_windows = numbered_words(10);
  EXPECT_EQ(
      result_error(submit(rt, chunked("nli", {two_windows, two_windows, two_windows}, 2)).get(),
                   &message),
      ErrorKind::kInvalidInput);
  EXPECT_NE(message.find("6 windows"), std::string::npos) << message;
  // Two of them fit.
  const InferenceResult ok = submit(rt, chunked("nli", {two_windows, two_windows}, 2)).get();
  ASSERT_FALSE(ok.error);
  EXPECT_EQ(ok.items.size(), 2u);
  EXPECT_EQ(ok.items[1].windows.size(), 2u);
  EXPECT_TRUE(rt.wait_idle(std::chrono::seconds(5)));
  EXPECT_EQ(metric(rt, "onepass_queue_depth", {{"model", "nli"}}), 0);
}

TEST(LongInput, PooledEmbeddingsAreTheTokenWeightedMeanOfTheWindows) {
  FakeWorld world;
  Runtime rt(options_with_limit(world, 8));
  InferenceRequest r = chunked("embed", {numbered_words(10)}, 2);
  r.output = OutputKind::kPooled;
  // 10 tokens, room 6, step 4: [0,6) [4,10).
  const std::vector<std::vector<std::int32_t>> windows = {framed(range_ids(10, 16)),
                                                          framed(range_ids(14, 20))};
  const InferenceResult result = submit(rt, r).get();
  ASSERT_FALSE(result.error);
  const ItemOutput& item = result.items.at(0);
  ASSERT_EQ(item.windows.size(), 2u);
  const std::size_t hidden = 64;
  std::vector<std::vector<float>> pooled;
  std::vector<std::size_t> tokens;
  for (const auto& window : windows) {
    std::vector<float> mean(hidden);
    for (std::size_t h = 0; h < hidden; ++h) {
      double sum = 0;
      for (std::size_t t = 0; t < window.size(); ++t) sum += fake_hidden(window[t], t, h);
      mean[h] = static_cast<float>(sum / window.size());
    }
    pooled.push_back(mean);
    tokens.push_back(window.size());
  }
  const auto expected = token_weighted_mean(pooled, tokens);
  ASSERT_EQ(item.values.size(), hidden);
  for (std::size_t h = 0; h < hidden; ++h) EXPECT_NEAR(item.values[h], expected[h], 1e-4);
}

TEST(LongInput, AFailingWindowFailsOnlyItsRequestAndDropsTheRest) {
  FakeWorld world;
  RuntimeOptions o = options_with_limit(world, 8);
  o.max_batch_tokens = 16;  // one window of 8 at a time for the document
  Runtime rt(o);
  // The second window holds id 7, whose output the fake model makes NaN.
  const std::string text = "10 11 12 13 14 15 7 17 18 19 20 21 22 23 24 25 26 27 28 29";
  const InferenceResult failed = submit(rt, chunked("nli", {text}, 0)).get();
  EXPECT_EQ(result_error(failed), ErrorKind::kBackend);
  EXPECT_TRUE(failed.items.empty());
  EXPECT_TRUE(rt.wait_idle(std::chrono::seconds(5)));
  // The windows after the failing one never ran: 20 tokens in windows of 6 are 4 windows.
  std::size_t document_sequences = 0;
  for (const auto& b : world.batch_log()) document_sequences += b.lengths.size();
  EXPECT_LT(document_sequences, 4u);
  EXPECT_FALSE(submit(rt, texts("nli", {"10 11"})).get().error);
}

// A short request that arrives while a long document runs is batched between the document's
// windows, and answered while the document still has windows to run.
TEST(LongInput, AShortRequestIsServedBetweenTheWindowsOfALongDocument) {
  FakeWorld world;
  world.forward_gate.close();
  RuntimeOptions o = options_with_limit(world, 8);
  o.max_batch_tokens = 16;  // the document's share is 8 tokens: one window at a time
  Runtime rt(o);
  ASSERT_TRUE(rt.wait_ready(std::chrono::seconds(5)));

  std::atomic<int> order{0};
  std::atomic<int> document_done_at{-1}, short_done_at{-1};
  std::promise<InferenceResult> document_promise, short_promise;
  // 36 tokens, room 6, no overlap: 6 windows.
  rt.submit(chunked("nli", {numbered_words(36)}, 0), [&](InferenceResult r) {
    document_done_at = order++;
    document_promise.set_value(std::move(r));
  });
  // The document's first window is in the engine, held; the short request arrives now.
  ASSERT_TRUE(world.forward_gate.wait_blocked(1));
  rt.submit(texts("nli", {"5 6"}), [&](InferenceResult r) {
    short_done_at = order++;
    short_promise.set_value(std::move(r));
  });
  ASSERT_TRUE(eventually([&] {
    return metric(rt, "onepass_batch_queue_depth", {{"model", "nli"}}) >= 1;
  }));
  world.forward_gate.open();
  const InferenceResult document = document_promise.get_future().get();
  const InferenceResult short_one = short_promise.get_future().get();
  ASSERT_FALSE(document.error);
  ASSERT_FALSE(short_one.error);
  EXPECT_EQ(document.items[0].windows.size(), 6u);
  EXPECT_EQ(short_done_at.load(), 0);
  EXPECT_EQ(document_done_at.load(), 1);

  // The batches: the short request (4 tokens, first id 5) ran in the second, next to the
  // document's second window; every batch held one window of the document at most.
  const auto batches = world.batch_log();
  ASSERT_EQ(batches.size(), 6u);
  for (std::size_t b = 0; b < batches.size(); ++b) {
    std::size_t windows = 0;
    for (std::size_t s = 0; s < batches[b].lengths.size(); ++s) {
      const bool is_short = batches[b].first_ids[s] == 5;
      EXPECT_EQ(is_short, b == 1 && batches[b].lengths[s] == 4);
      windows += is_short ? 0 : 1;
    }
    EXPECT_EQ(windows, 1u);
  }
  EXPECT_EQ(short_one.items[0].num_tokens, 4);
}

}  // namespace
}  // namespace onepass::runtime
