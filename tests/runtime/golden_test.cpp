// The runtime on the real engine and tokenizers, co-hosting the five fixture models: outputs
// through batching equal the Hugging Face goldens (docs/reliability.md: logits within 1e-4 and the
// same labels, embeddings with cosine >= 0.9999), and an input alone equals itself inside a
// batch within 1e-5.
#include <gtest/gtest.h>

#include <cmath>
#include <mutex>
#include <nlohmann/json.hpp>
#include <random>

#include "call.h"
#include "tests/support/fixture_catalogue.h"
#include "tests/support/golden_file.h"
#include "tests/support/vector_compare.h"

namespace onepass::runtime {
namespace {

using namespace testing;
using onepass::testing::cosine;
using onepass::testing::max_abs_diff;
using namespace std::chrono_literals;
using nlohmann::json;

// Every sequence-classification fixture of the catalogue (tests/support/fixture_catalogue.h).
const std::vector<std::string> kClassifiers = onepass::testing::fixtures_with_task(
    {onepass::testing::FixtureTask::kClassifier, onepass::testing::FixtureTask::kReranker});

using onepass::testing::read_golden;

InferenceItem ids_item(const json& c) {
  InferenceItem item;
  item.pretokenized = true;
  item.input_ids = c["input_ids"].get<std::vector<std::int32_t>>();
  if (c.contains("token_type_ids")) {
    item.token_type_ids = c["token_type_ids"].get<std::vector<std::int32_t>>();
  }
  return item;
}

std::size_t argmax(const std::vector<float>& v) {
  return std::max_element(v.begin(), v.end()) - v.begin();
}

class Golden : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    RuntimeOptions o;
    for (const auto& m : kClassifiers) o.models.push_back({m, fixture_model(m)});
    o.models.push_back({"bert-tiny-embed", fixture_model("bert-tiny-embed")});
    o.threads = 1;  // the shared test machine is small; parallel kernels are the engine's tests
    runtime_ = new Runtime(o);
    ASSERT_TRUE(runtime_->wait_ready(60s));
  }
  // Every fixture's architecture is in the loader's table, so every model must be ready.
  static bool served(const std::string& model) {
    const auto d = runtime_->find_model(model);
    EXPECT_TRUE(d);
    if (!d) return false;
    EXPECT_EQ(d->state, ModelState::kReady) << model << ": " << d->load_error;
    return d->state == ModelState::kReady;
  }
  static void TearDownTestSuite() {
    delete runtime_;
    runtime_ = nullptr;
  }
  static Runtime* runtime_;
};
Runtime* Golden::runtime_ = nullptr;

TEST_F(Golden, ClassifierLogitsThroughBatchesMatchAndAloneEqualsBatched) {
  for (const std::string& model : kClassifiers) {
    SCOPED_TRACE(model);
    if (!served(model)) continue;
    const json g = read_golden(model);
    // All cases in one client batch: every item is its own sequence in a ragged batch.
    InferenceRequest all;
    all.model = model;
    for (const auto& c : g["cases"]) all.items.push_back(ids_item(c));
    const InferenceResult batched = submit(*runtime_, all).get();
    ASSERT_FALSE(batched.error);
    ASSERT_EQ(batched.items.size(), g["cases"].size());
    for (std::size_t i = 0; i < g["cases"].size(); ++i) {
      const json& c = g["cases"][i];
      SCOPED_TRACE(c["id"].get<std::string>());
      const auto expected = c["logits"].get<std::vector<float>>();
      EXPECT_LE(max_abs_diff(batched.items[i].values, expected), 1e-4f);
      EXPECT_EQ(argmax(batched.items[i].values), argmax(expected));
      EXPECT_EQ(batched.items[i].num_tokens, c["num_tokens"].get<int>());
      // The same input alone (nothing else in flight: a batch of one).
      InferenceRequest one;
      one.model = model;
      one.items.push_back(ids_item(c));
      const InferenceResult alone = submit(*runtime_, one).get();
      ASSERT_FALSE(alone.error);
      EXPECT_LE(max_abs_diff(alone.items[0].values, batched.items[i].values), 1e-5f);
    }
  }
}

TEST_F(Golden, EmbeddingsMatchForBothPoolingsAndTokenStates) {
  ASSERT_TRUE(served("bert-tiny-embed"));
  const json g = read_golden("bert-tiny-embed");
  for (Pooling pooling : {Pooling::kMean, Pooling::kCls}) {
    InferenceRequest r;
    r.model = "bert-tiny-embed";
    r.output = OutputKind::kPooled;
    r.pooling = pooling;
    for (const auto& c : g["cases"]) r.items.push_back(ids_item(c));
    const InferenceResult result = submit(*runtime_, r).get();
    ASSERT_FALSE(result.error);
    for (std::size_t i = 0; i < g["cases"].size(); ++i) {
      const json& c = g["cases"][i];
      SCOPED_TRACE(c["id"].get<std::string>());
      const auto expected =
          c["embedding"][pooling == Pooling::kMean ? "mean" : "cls"].get<std::vector<float>>();
      EXPECT_GE(cosine(result.items[i].values, expected), 0.9999);
      EXPECT_LE(max_abs_diff(result.items[i].values, expected), 1e-4f);
    }
  }
  InferenceRequest tokens;
  tokens.model = "bert-tiny-embed";
  tokens.output = OutputKind::kTokens;
  tokens.items.push_back(ids_item(g["cases"][0]));
  const InferenceResult t = submit(*runtime_, tokens).get();
  ASSERT_FALSE(t.error);
  const int n = g["cases"][0]["num_tokens"].get<int>();
  ASSERT_EQ(t.items[0].values.size(), static_cast<std::size_t>(n) * 64);
  const auto cls = g["cases"][0]["embedding"]["cls"].get<std::vector<float>>();
  EXPECT_LE(max_abs_diff(
                std::vector<float>(t.items[0].values.begin(), t.items[0].values.begin() + 64), cls),
            1e-4f);
}

TEST_F(Golden, TextInputsAreTokenizedOnTheRuntimeAndMatch) {
  for (const std::string& model : kClassifiers) {
    SCOPED_TRACE(model);
    if (!served(model)) continue;
    const json g = read_golden(model);
    const auto described = runtime_->find_model(model);
    ASSERT_TRUE(described);
    std::vector<std::pair<const json*, Pending>> pending;
    for (const auto& c : g["cases"]) {
      // tokenizer.json ids differ from the slow ids (the goldens') on these cases only.
      if (c.contains("fast_input_ids")) continue;
      InferenceRequest r;
      r.model = model;
      InferenceItem item;
      if (c.contains("pair")) {
        item.text = c["pair"][0].get<std::string>();
        item.text_pair = c["pair"][1].get<std::string>();
      } else {
        item.text = c["text"].get<std::string>();
      }
      r.items.push_back(item);
      if (c.contains("truncation")) {
        r.truncate = true;
        r.max_length = c["max_length"].get<std::size_t>();
        const std::string s = c["truncation"].get<std::string>();
        r.truncation_strategy = s == "only_first"    ? tokenizer::TruncationStrategy::kOnlyFirst
                                : s == "only_second" ? tokenizer::TruncationStrategy::kOnlySecond
                                                     : tokenizer::TruncationStrategy::kLongestFirst;
      }
      pending.emplace_back(&c, submit(*runtime_, r));
    }
    for (auto& [c, p] : pending) {
      SCOPED_TRACE((*c)["id"].get<std::string>());
      const InferenceResult r = p.get();
      std::string message;
      ASSERT_FALSE(result_error(r, &message)) << message;
      EXPECT_EQ(r.items[0].num_tokens, (*c)["num_tokens"].get<int>());
      const auto expected = (*c)["logits"].get<std::vector<float>>();
      EXPECT_LE(max_abs_diff(r.items[0].values, expected), 1e-4f);
    }
  }
}

TEST_F(Golden, ConcurrentClientsAcrossModelsEachGetTheirOwnAnswer) {
  struct Case {
    std::string model;
    InferenceItem item;
    std::vector<float> logits;
  };
  std::vector<Case> cases;
  for (const std::string& model : kClassifiers) {
    if (!served(model)) continue;
    const json g = read_golden(model);
    for (const auto& c : g["cases"]) {
      cases.push_back({model, ids_item(c), c["logits"].get<std::vector<float>>()});
    }
  }
  constexpr int kClients = 8;
  std::vector<std::thread> clients;
  std::mutex mutex;
  std::vector<std::string> failures;
  for (int t = 0; t < kClients; ++t) {
    clients.emplace_back([&, t] {
      std::mt19937 rng(t);
      std::vector<Pending> pending;
      std::vector<const Case*> sent;
      for (int i = 0; i < 16; ++i) {
        const Case& c = cases[rng() % cases.size()];
        InferenceRequest r;
        r.model = c.model;
        r.items.push_back(c.item);
        pending.push_back(submit(*runtime_, r));
        sent.push_back(&c);
      }
      for (std::size_t i = 0; i < pending.size(); ++i) {
        const InferenceResult r = pending[i].get();
        if (r.error || max_abs_diff(r.items[0].values, sent[i]->logits) > 1e-4f ||
            *pending[i].calls != 1) {
          std::lock_guard lock(mutex);
          failures.push_back(sent[i]->model);
        }
      }
    });
  }
  for (auto& c : clients) c.join();
  EXPECT_TRUE(failures.empty()) << failures.size() << " wrong answers, first from "
                                << failures.front();
  std::vector<Sample> s;
  EXPECT_TRUE(check_prometheus_text(runtime_->render_metrics(), &s).empty());
  int loaded = 0;
  for (const auto& d : runtime_->models()) loaded += d.state == ModelState::kReady ? 1 : 0;
  EXPECT_GE(loaded, 4);
  EXPECT_EQ(sample_value(s, "onepass_loaded_models"), loaded);
}

}  // namespace
}  // namespace onepass::runtime
