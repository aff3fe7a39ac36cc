// The bench against the real `onepass serve` on loopback (port 0) with fixture models: a small
// sweep in every dialect onepass serves, and compare mode on two servers of the same model.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <string>
#include <thread>

#include "base/error.h"
#include "bench/bench.h"
#include "bench/results.h"
#include "http/client.h"

namespace onepass::bench {
namespace {

using namespace std::chrono_literals;

const std::filesystem::path kBinary =
    std::filesystem::path(ONEPASS_BINARY_DIR) / "apps/onepass/onepass";
const std::filesystem::path kModels =
    std::filesystem::path(ONEPASS_TEST_DATA_DIR) / "fixtures/models";

// `onepass serve` in a child process; the URL comes from its "listening on HOST:PORT" line.
class ServeProcess {
 public:
  explicit ServeProcess(std::vector<std::string> args) {
    int out[2];
    if (::pipe(out) != 0) return;
    pid_ = ::fork();
    if (pid_ == 0) {
      ::dup2(out[1], STDOUT_FILENO);
      ::close(out[0]);
      ::close(out[1]);
      std::vector<char*> argv;
      std::string binary = kBinary.string();
      argv.push_back(binary.data());
      for (auto& a : args) argv.push_back(a.data());
      argv.push_back(nullptr);
      ::execv(binary.c_str(), argv.data());
      ::_exit(127);
    }
    ::close(out[1]);
    stdout_ = ::fdopen(out[0], "r");
    char line[512];
    while (stdout_ != nullptr && std::fgets(line, sizeof(line), stdout_) != nullptr) {
      const std::string text(line);
      const auto at = text.find("listening on ");
      if (at == std::string::npos) continue;
      std::string address = text.substr(at + 13);
      while (!address.empty() && (address.back() == '\n' || address.back() == '\r'))
        address.pop_back();
      url_ = "http://" + address;
      break;
    }
  }
  ~ServeProcess() {
    if (pid_ > 0) {
      ::kill(pid_, SIGTERM);
      int status = 0;
      ::waitpid(pid_, &status, 0);
    }
    if (stdout_ != nullptr) std::fclose(stdout_);
  }
  const std::string& url() const { return url_; }

 private:
  pid_t pid_ = -1;
  std::FILE* stdout_ = nullptr;
  std::string url_;
};

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
  ServeProcess server({"serve", "--model", "nli=" + (kModels / "xlmr-tiny-nli").string(), "--host",
                       "127.0.0.1", "--port", "0"});
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

TEST(Serve, SweepInEveryDialectOfAnEmbedder) {
  ServeProcess server({"serve", "--model", "emb=" + (kModels / "bert-tiny-embed").string(),
                       "--host", "127.0.0.1", "--port", "0"});
  ASSERT_FALSE(server.url().empty()) << "serve did not print its address";
  for (const char* dialect : {"onepass", "tei", "triton", "openai", "vllm"}) {
    Workload w = tiny_sweep();
    const BenchResult result = run_bench({spec(dialect, server.url(), dialect, "emb")}, w);
    EXPECT_EQ(result.endpoints[0].reference.answered_task(), Task::kEmbed) << dialect;
    expect_clean(result.endpoints[0]);
  }
}

TEST(Serve, SweepInEveryDialectOfAReranker) {
  ServeProcess server({"serve", "--model", "rr=" + (kModels / "bert-tiny-rerank").string(),
                       "--host", "127.0.0.1", "--port", "0"});
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
  ServeProcess server({"serve", "--model", "ner=" + (kModels / "bert-tiny-ner").string(), "--host",
                       "127.0.0.1", "--port", "0"});
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
  ServeProcess server({"serve", "--model", "sp=" + (kModels / "bert-tiny-splade").string(),
                       "--host", "127.0.0.1", "--port", "0"});
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

// GET /ping until 200: a question-answering request tokenizes on the HTTP thread, which a
// model still loading answers with 503 (docs/api.md), where a classifier's request waits.
bool wait_ready(const std::string& url) {
  http::Connection connection(http::Url::parse(url), 2000ms);
  http::Request ping;
  ping.method = "GET";
  ping.target = "/ping";
  for (int i = 0; i < 200; ++i) {
    if (connection.send(ping).status == 200) return true;
    std::this_thread::sleep_for(50ms);
  }
  return false;
}

// Extractive question answering: each sample's hypothesis asked about its premise, found by
// asking (auto: classify, embed and tokens are refused) or named; batched and concurrent answers
// equal the reference's; a dialect without the route is refused before any request.
TEST(Serve, SweepOfAQuestionAnswerer) {
  ServeProcess server({"serve", "--model", "qa=" + (kModels / "bert-tiny-qa").string(), "--host",
                       "127.0.0.1", "--port", "0"});
  ASSERT_FALSE(server.url().empty()) << "serve did not print its address";
  ASSERT_TRUE(wait_ready(server.url()));
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

TEST(Serve, CompareTwoServersOfTheSameModelAgreesFully) {
  const std::string model = "nli=" + (kModels / "bert-tiny-nli").string();
  ServeProcess a({"serve", "--model", model, "--host", "127.0.0.1", "--port", "0"});
  ServeProcess b({"serve", "--model", model, "--host", "127.0.0.1", "--port", "0"});
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
