// The bench against the real `onepass serve` on loopback (port 0) with fixture models: a small
// sweep in every dialect onepass serves, and compare mode on two servers of the same model.
#include <gtest/gtest.h>

#include <string>
#include <string_view>

#include "base/error.h"
#include "bench/bench.h"
#include "bench/load.h"
#include "bench/results.h"
#include "tests/support/paths.h"
#include "tests/support/serve_process.h"

namespace onepass::bench {
namespace {

using namespace std::chrono_literals;

using onepass::testing::fixture_model;
using onepass::testing::ServeProcess;

Workload tiny_sweep() {
  Workload w;
  w.dataset_name = "default";
  w.samples = default_dataset();
  w.requests = 12;
  w.warmup = 1;
  w.sweep_batch = {4};
  w.sweep_concurrency = {1, 4};
  w.timeout = 20000ms;
  return w;
}

EndpointSpec spec(const std::string& name, const std::string& url, const std::string& dialect,
                  const std::string& model) {
  EndpointSpec e;
  e.name = name;
  e.url = url;
  e.dialect = dialect;
  e.options.model = model;
  return e;
}

void expect_clean(const EndpointResult& e) {
  EXPECT_TRUE(e.reference.errors.empty()) << e.spec.dialect;
  for (const RunResult& r : e.runs) {
    EXPECT_TRUE(r.errors.empty()) << e.spec.dialect << " " << r.spec.kind;
    EXPECT_EQ(r.ok_requests, r.spec.requests) << e.spec.dialect;
    EXPECT_EQ(r.verified, r.ok_samples) << e.spec.dialect;
    EXPECT_EQ(r.mismatches, 0u) << e.spec.dialect;
  }
}

TEST(Serve, SweepInEveryDialectOfAClassifier) {
  ServeProcess server({"--model", "nli=" + fixture_model("xlmr-tiny-nli")});
  ASSERT_FALSE(server.url().empty()) << "serve did not print its address";
  for (const char* dialect : {"onepass", "hf", "tei", "triton", "vllm"}) {
    EndpointSpec e = spec(dialect, server.url(), dialect, "nli");
    // KServe answers logits only: the label names come from the fixture's id2label.
    e.options.label_names = {"entailment", "neutral", "contradiction"};
    const BenchResult result = run_bench({e}, tiny_sweep());
    ASSERT_EQ(result.endpoints.size(), 1u);
    EXPECT_EQ(result.endpoints[0].reference.answered_task(), Task::kClassify) << dialect;
    expect_clean(result.endpoints[0]);
    // A 3-label NLI model on a labelled dataset: accuracy is always reported.
    EXPECT_TRUE(result.endpoints[0].reference.accuracy().has_value()) << dialect;
  }
}

// Over gRPC too: with one model served, TEI's messages need no target-model metadata.
TEST(Serve, SweepInEveryDialectOfAnEmbedder) {
  ServeProcess server({"--model", "emb=" + fixture_model("bert-tiny-embed"), "--grpc-port", "0"});
  ASSERT_FALSE(server.url().empty()) << "serve did not print its address";
  ASSERT_NE(server.grpc_port(), 0) << "serve did not print its gRPC address";
  const std::string grpc_url = "grpc://127.0.0.1:" + std::to_string(server.grpc_port());
  for (const char* dialect : {"onepass", "tei", "triton", "openai", "vllm", "tei-grpc"}) {
    Workload w = tiny_sweep();
    const bool grpc = std::string_view(dialect) == "tei-grpc";
    const BenchResult result =
        run_bench({spec(dialect, grpc ? grpc_url : server.url(), dialect, "emb")}, w);
    EXPECT_EQ(result.endpoints[0].reference.answered_task(), Task::kEmbed) << dialect;
    expect_clean(result.endpoints[0]);
  }
}

TEST(Serve, SweepInEveryDialectOfAReranker) {
  ServeProcess server({"--model", "rr=" + fixture_model("bert-tiny-rerank")});
  ASSERT_FALSE(server.url().empty()) << "serve did not print its address";
  for (const char* dialect : {"cohere", "vllm", "tei"}) {
    const BenchResult result =
        run_bench({spec(dialect, server.url(), dialect, "rr")}, tiny_sweep());
    EXPECT_EQ(result.endpoints[0].reference.answered_task(), Task::kClassify) << dialect;
    expect_clean(result.endpoints[0]);
  }
}

// The NER workload: every sample's entities (aggregation_strategy simple), found by asking
// (auto) or named (--task tokens), batched and concurrent answers equal to the reference's.
TEST(Serve, SweepInEveryDialectOfATokenClassifier) {
  ServeProcess server({"--model", "ner=" + fixture_model("bert-tiny-ner")});
  ASSERT_FALSE(server.url().empty()) << "serve did not print its address";
  for (const char* dialect : {"onepass", "hf", "tei"}) {
    for (const Task task : {Task::kAuto, Task::kTokens}) {
      Workload w = tiny_sweep();
      w.task = task;
      const BenchResult result = run_bench({spec(dialect, server.url(), dialect, "ner")}, w);
      const auto& reference = result.endpoints[0].reference;
      EXPECT_EQ(reference.answered_task(), Task::kTokens) << dialect;
      expect_clean(result.endpoints[0]);
      EXPECT_FALSE(reference.accuracy().has_value()) << dialect;
      // The tiny model's random weights tag some tokens: entities were compared, not only [].
      bool some_entity = false;
      for (const auto& answer : reference.answers)
        some_entity = some_entity || (answer && !answer->values.empty());
      EXPECT_TRUE(some_entity) << dialect;
    }
  }
}

// SPLADE through TEI's /embed_sparse, found by asking (auto: /predict, /embed and
// /predict_tokens refuse it) or named; a dialect without the route is refused before any request.
TEST(Serve, SweepOfASparseEmbedder) {
  ServeProcess server({"--model", "sp=" + fixture_model("bert-tiny-splade")});
  ASSERT_FALSE(server.url().empty()) << "serve did not print its address";
  for (const Task task : {Task::kAuto, Task::kSparse}) {
    Workload w = tiny_sweep();
    w.task = task;
    const BenchResult result = run_bench({spec("tei", server.url(), "tei", "sp")}, w);
    const auto& reference = result.endpoints[0].reference;
    EXPECT_EQ(reference.answered_task(), Task::kSparse);
    expect_clean(result.endpoints[0]);
    for (const auto& answer : reference.answers) {
      ASSERT_TRUE(answer.has_value());
      EXPECT_FALSE(answer->values.empty());
    }
  }
  Workload w = tiny_sweep();
  w.task = Task::kSparse;
  EXPECT_THROW(run_bench({spec("hf", server.url(), "hf", "sp")}, w), Error);
}

// Extractive question answering: each sample's hypothesis asked about its premise, found by
// asking (auto: classify, embed and tokens are refused) or named; batched and concurrent answers
// equal the reference's; a dialect without the route is refused before any request.
TEST(Serve, SweepOfAQuestionAnswerer) {
  ServeProcess server({"--model", "qa=" + fixture_model("bert-tiny-qa")});
  ASSERT_FALSE(server.url().empty()) << "serve did not print its address";
  // GET /ping until 200: a question-answering request tokenizes on the HTTP thread, which a
  // model still loading answers with 503 (docs/api.md), where a classifier's request waits.
  ASSERT_TRUE(server.wait_ready(10000)) << server.log();
  for (const char* dialect : {"onepass", "hf"}) {
    for (const Task task : {Task::kAuto, Task::kQuestion}) {
      Workload w = tiny_sweep();
      w.task = task;
      const BenchResult result = run_bench({spec(dialect, server.url(), dialect, "qa")}, w);
      const auto& reference = result.endpoints[0].reference;
      EXPECT_EQ(reference.answered_task(), Task::kQuestion) << dialect;
      expect_clean(result.endpoints[0]);
      EXPECT_FALSE(reference.accuracy().has_value()) << dialect;
      for (const auto& answer : reference.answers) {
        ASSERT_TRUE(answer.has_value());
        EXPECT_GT(answer->score, 0.0);
        EXPECT_EQ(answer->label.rfind("answer[", 0), 0u) << answer->label;
      }
    }
  }
  Workload w = tiny_sweep();
  w.task = Task::kQuestion;
  EXPECT_THROW(run_bench({spec("tei", server.url(), "tei", "qa")}, w), Error);
}

// Open-label extraction (GLiNER) at /extract, found by asking (auto: /invocations asks it for
// labels, which the other workloads never send) or named, the bundled texts with the default
// labels; a dialect without the route is refused before any request.
TEST(Serve, SweepOfAnExtractor) {
  ServeProcess server({"--model", "gl=" + fixture_model("gliner-tiny-markerv0")});
  ASSERT_FALSE(server.url().empty()) << "serve did not print its address";
  ASSERT_TRUE(server.wait_ready(10000)) << server.log();
  for (const Task task : {Task::kAuto, Task::kExtract}) {
    Workload w = tiny_sweep();
    w.task = task;
    const BenchResult result = run_bench({spec("onepass", server.url(), "onepass", "gl")}, w);
    const auto& reference = result.endpoints[0].reference;
    EXPECT_EQ(reference.answered_task(), Task::kExtract);
    expect_clean(result.endpoints[0]);
    for (const auto& answer : reference.answers) {
      ASSERT_TRUE(answer.has_value());
      EXPECT_EQ(answer->label.rfind("entities:", 0), 0u) << answer->label;
    }
  }
  Workload w = tiny_sweep();
  w.task = Task::kExtract;
  EXPECT_THROW(run_bench({spec("hf", server.url(), "hf", "gl")}, w), Error);
}

// The gRPC dialects against `onepass serve --grpc-port` (one server, an API key): every request
// of a sweep answered and verified, the answers the REST v2 dialect's (compare mode), and a
// wrong key counted per request under the gRPC status's name, its message kept and the key not.
TEST(Serve, SweepOverKServeGrpcMatchesRestAndCountsAWrongKey) {
  const std::string key = "bench-grpc-key";
  ServeProcess server({"--model", "nli=" + fixture_model("xlmr-tiny-nli"), "--model",
                       "emb=" + fixture_model("bert-tiny-embed"), "--grpc-port", "0", "--api-key",
                       key});
  ASSERT_NE(server.grpc_port(), 0) << "serve did not print its gRPC address";
  const std::string grpc_url = "grpc://127.0.0.1:" + std::to_string(server.grpc_port());
  auto with_key = [&](EndpointSpec e, const std::string& k) {
    e.options.headers.emplace_back("Authorization", "Bearer " + k);
    e.options.label_names = {"entailment", "neutral", "contradiction"};
    return e;
  };
  Workload w = tiny_sweep();
  const BenchResult nli = run_bench({with_key(spec("rest", server.url(), "kserve", "nli"), key),
                                     with_key(spec("grpc", grpc_url, "kserve-grpc", "nli"), key)},
                                    w);
  ASSERT_EQ(nli.endpoints.size(), 2u);
  for (const auto& e : nli.endpoints) expect_clean(e);
  EXPECT_EQ(nli.endpoints[1].reference.answered_task(), Task::kClassify);
  EXPECT_TRUE(nli.endpoints[1].reference.accuracy().has_value());
  ASSERT_EQ(nli.agreement.size(), 1u);
  EXPECT_GT(nli.agreement[0].compared, 0u);
  EXPECT_DOUBLE_EQ(*nli.agreement[0].rate(), 1.0);

  const BenchResult emb =
      run_bench({with_key(spec("grpc", grpc_url, "kserve-grpc", "emb"), key)}, w);
  EXPECT_EQ(emb.endpoints[0].reference.answered_task(), Task::kEmbed);
  expect_clean(emb.endpoints[0]);

  // The same workload with a wrong key: every request refused, counted by status name.
  const auto wrong =
      make_dialect("kserve-grpc", with_key(spec("", "", "", "nli"), "wrong").options);
  RunSpec run;
  run.requests = 6;
  run.warmup = 0;
  run.concurrency = 2;
  const RunResult refused = run_load(*wrong, grpc_url, w.samples, nli.endpoints[1].reference, run);
  EXPECT_EQ(refused.ok_requests, 0u);
  ASSERT_EQ(refused.errors.size(), 1u);
  EXPECT_EQ(refused.errors.count("UNAUTHENTICATED"), 1u);
  EXPECT_EQ(refused.errors.at("UNAUTHENTICATED"), run.requests);
  ASSERT_EQ(refused.error_messages.count("UNAUTHENTICATED"), 1u);
  EXPECT_NE(refused.error_messages.at("UNAUTHENTICATED").find("API key"), std::string::npos);
  EXPECT_EQ(refused.error_messages.at("UNAUTHENTICATED").find("wrong"), std::string::npos);

  // Nothing listening (port 1): every request counted as "connect", without waiting for the
  // --timeout of 20 s per worker.
  const auto started = std::chrono::steady_clock::now();
  const auto good = make_dialect("kserve-grpc", with_key(spec("", "", "", "nli"), key).options);
  const RunResult nobody =
      run_load(*good, "grpc://127.0.0.1:1", w.samples, nli.endpoints[1].reference, run);
  EXPECT_EQ(nobody.ok_requests, 0u);
  EXPECT_EQ(nobody.errors.count("connect"), 1u);
  EXPECT_EQ(nobody.errors.size(), 1u);
  EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(10));

  // A gRPC dialect refuses an http:// endpoint, and an HTTP one a grpc:// endpoint.
  EXPECT_THROW(run_bench({with_key(spec("x", server.url(), "kserve-grpc", "nli"), key)}, w), Error);
  EXPECT_THROW(run_bench({with_key(spec("x", grpc_url, "kserve", "nli"), key)}, w), Error);
}

// tei-grpc against `onepass serve --grpc-port`'s tei.v1 services (several models: the target
// model metadata picks one): every request of the sweep (batches of 4 as streams) answered and
// verified, the classifier's answers the REST tei dialect's, the embedder and the SPLADE model
// found by --task auto.
TEST(Serve, SweepOverTeiGrpcMatchesRest) {
  ServeProcess server({"--model", "nli=" + fixture_model("xlmr-tiny-nli"), "--model",
                       "emb=" + fixture_model("bert-tiny-embed"), "--model",
                       "splade=" + fixture_model("bert-tiny-splade"), "--grpc-port", "0"});
  ASSERT_NE(server.grpc_port(), 0) << "serve did not print its gRPC address";
  const std::string grpc_url = "grpc://127.0.0.1:" + std::to_string(server.grpc_port());
  auto target = [](EndpointSpec e, const std::string& model) {
    e.options.headers.emplace_back("X-Amzn-SageMaker-Target-Model", model);
    return e;
  };
  const Workload w = tiny_sweep();
  const BenchResult nli = run_bench({target(spec("rest", server.url(), "tei", ""), "nli"),
                                     target(spec("grpc", grpc_url, "tei-grpc", ""), "nli")},
                                    w);
  for (const auto& e : nli.endpoints) expect_clean(e);
  EXPECT_EQ(nli.endpoints[1].reference.answered_task(), Task::kClassify);
  EXPECT_TRUE(nli.endpoints[1].reference.accuracy().has_value());
  ASSERT_EQ(nli.agreement.size(), 1u);
  EXPECT_GT(nli.agreement[0].compared, 0u);
  EXPECT_DOUBLE_EQ(*nli.agreement[0].rate(), 1.0);

  const BenchResult emb = run_bench({target(spec("grpc", grpc_url, "tei-grpc", ""), "emb")}, w);
  EXPECT_EQ(emb.endpoints[0].reference.task, Task::kEmbed);
  expect_clean(emb.endpoints[0]);
  const BenchResult splade =
      run_bench({target(spec("grpc", grpc_url, "tei-grpc", ""), "splade")}, w);
  EXPECT_EQ(splade.endpoints[0].reference.task, Task::kSparse);
  expect_clean(splade.endpoints[0]);

  // An unknown target model: every call refused, counted as NOT_FOUND with the server's words.
  const auto nowhere = make_dialect("tei-grpc", target(spec("", "", "", ""), "nope").options);
  RunSpec run;
  run.requests = 4;
  run.warmup = 0;
  const RunResult refused =
      run_load(*nowhere, grpc_url, w.samples, nli.endpoints[1].reference, run);
  EXPECT_EQ(refused.ok_requests, 0u);
  EXPECT_EQ(refused.errors.count("NOT_FOUND"), 1u);
  EXPECT_EQ(refused.errors.size(), 1u);
}

TEST(Serve, CompareTwoServersOfTheSameModelAgreesFully) {
  const std::string model = "nli=" + fixture_model("bert-tiny-nli");
  ServeProcess a({"--model", model});
  ServeProcess b({"--model", model});
  ASSERT_FALSE(a.url().empty());
  ASSERT_FALSE(b.url().empty());
  Workload w = tiny_sweep();
  w.sweep_batch.clear();
  w.sweep_concurrency = {2};
  const BenchResult result =
      run_bench({spec("a", a.url(), "onepass", "nli"), spec("b", b.url(), "tei", "nli")}, w);
  ASSERT_EQ(result.agreement.size(), 1u);
  EXPECT_EQ(result.agreement[0].compared, w.samples.size() < 13 ? w.samples.size() : 13u);
  EXPECT_DOUBLE_EQ(*result.agreement[0].rate(), 1.0);
  for (const auto& e : result.endpoints) expect_clean(e);
}

}  // namespace
}  // namespace onepass::bench
