// End to end through the `onepass serve` binary: the bad-input catalogue against the real
// runtime, 64 concurrent clients, lazy loading with waiting requests, idle unload and reload,
// SIGTERM with requests in flight, and the API key.
#include <gtest/gtest.h>
#include <signal.h>

#include <atomic>
#include <future>
#include <nlohmann/json.hpp>
#include <thread>

#include "metrics_scrape.h"
#include "tests/support/http_client.h"
#include "tests/support/paths.h"
#include "tests/support/serve_process.h"

namespace onepass::testing {
namespace {

using nlohmann::json;

const std::string kPremise = "A man is playing a guitar on a busy street corner.";

std::string long_text(int words) {
  std::string text;
  for (int i = 0; i < words; ++i) text += "guitar street corner ";
  return text;
}

TEST(ServeLifecycle, BadInputsAgainstTheRealRuntimeThenStillCorrect) {
  ServeProcess server({"--model", "nli=" + fixture_model("bert-tiny-nli")});
  ASSERT_TRUE(server.wait_ready()) << server.log();
  const auto port = server.port();
  const auto before = post_json(port, "/predict", json{{"inputs", kPremise}}.dump());
  ASSERT_EQ(before.status, 200) << before.body;

  // Too many tokens with truncation off: 422 naming both counts; with it on: served.
  auto r = post_json(port, "/predict", json{{"inputs", long_text(400)}}.dump());
  EXPECT_EQ(r.status, 422) << r.body;
  const std::string message = json::parse(r.body)["error"];
  EXPECT_NE(message.find("512"), std::string::npos) << message;
  r = post_json(port, "/predict", json{{"inputs", long_text(400)}, {"truncate", true}}.dump());
  EXPECT_EQ(r.status, 200) << r.body;
  // A token id outside the vocabulary (2600 ids).
  r = post_json(
      port, "/v2/models/nli/infer",
      R"({"inputs":[{"name":"input_ids","shape":[1,3],"datatype":"INT64","data":[12,999999,13]}]})");
  EXPECT_EQ(r.status, 422) << r.body;
  // A multi-megabyte string is refused (payload limit 6 MB) or rejected before tokenizing.
  r = post_json(port, "/predict", json{{"inputs", std::string(7 * 1024 * 1024, 'a')}}.dump());
  EXPECT_EQ(r.status, 413);
  std::string words;
  for (int i = 0; i < 1500000; ++i) words += "a ";
  r = post_json(port, "/predict", json{{"inputs", words}}.dump());
  EXPECT_EQ(r.status, 422) << r.body.substr(0, 300);
  // Unknown and hostile model names.
  EXPECT_EQ(post_json(port, "/v2/models/%2e%2e%2fnli/infer", "{}").status, 404);
  EXPECT_EQ(post_json(port, "/invocations", R"({"inputs":"a"})",
                      HttpHeaders{{{"X-Amzn-SageMaker-Target-Model", "../../etc/passwd"}}})
                .status,
            404);
  // Whitespace, control characters, emoji, RTL marks and NUL are served.
  r = post_json(port, "/predict",
                R"({"inputs":"  \t\u0001 \ud83d\udc68\u200d\ud83d\udc69 \u200f a\u0000b "})");
  EXPECT_EQ(r.status, 200) << r.body;
  // The server still answers the first request exactly as before.
  EXPECT_EQ(post_json(port, "/predict", json{{"inputs", kPremise}}.dump()).body, before.body);
}

TEST(ServeLifecycle, SixtyFourConcurrentClientsEachGetTheAnswerToTheirOwnRequest) {
  ServeProcess server({"--model", "nli=" + fixture_model("bert-tiny-nli"), "--max-wait-ms", "2"});
  ASSERT_TRUE(server.wait_ready()) << server.log();
  const auto port = server.port();
  constexpr int kClients = 64;
  std::vector<std::string> bodies, alone;
  for (int i = 0; i < kClients; ++i) {
    bodies.push_back(json{
        {"inputs",
         {kPremise.substr(0, 10 + i % 40), "variant " + std::to_string(i) + long_text(i % 3)}},
        {"raw_scores",
         true}}.dump());
    const auto r = post_json(port, "/predict", bodies.back());
    ASSERT_EQ(r.status, 200) << r.body;
    alone.push_back(r.body);
  }
  std::atomic<int> mismatches{0};
  std::vector<std::thread> clients;
  for (int c = 0; c < kClients; ++c)
    clients.emplace_back([&, c] {
      HttpConnection connection(port);
      for (int round = 0; round < 2; ++round) {
        const int i = (c * 7 + round) % kClients;
        const auto r = connection.request("POST", "/predict", bodies[i]);
        if (r.status != 200) {
          ++mismatches;
          continue;
        }
        // Batched with random companions: equal within 1e-5 to the answer alone.
        const auto got = json::parse(r.body), want = json::parse(alone[i]);
        for (std::size_t k = 0; k < want.size(); ++k)
          if (got[k]["label"] != want[k]["label"] ||
              std::abs(got[k]["score"].get<double>() - want[k]["score"].get<double>()) > 1e-5)
            ++mismatches;
      }
    });
  for (auto& t : clients) t.join();
  EXPECT_EQ(mismatches.load(), 0);
}

TEST(ServeLifecycle, LazyLoadServesTheRequestsThatWaitForIt) {
  ServeProcess server({"--model", "nli=" + fixture_model("bert-tiny-nli"), "--model",
                       "dnli=" + fixture_model("deberta-v2-tiny-nli"), "--lazy"});
  const auto port = server.port();
  auto r = get(port, "/v2/models/dnli/ready");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(json::parse(r.body)["ready"], false);
  std::vector<std::future<HttpResult>> waiting;
  for (int i = 0; i < 8; ++i)
    waiting.push_back(std::async(std::launch::async, [&, i] {
      return post_json(port, "/predict", json{{"inputs", kPremise + std::to_string(i)}}.dump(),
                       HttpHeaders{{{"X-Amzn-SageMaker-Target-Model", "dnli"}}});
    }));
  for (auto& f : waiting) {
    const auto result = f.get();
    EXPECT_EQ(result.status, 200) << result.body;
  }
  EXPECT_EQ(json::parse(get(port, "/v2/models/dnli/ready").body)["ready"], true);
}

TEST(ServeLifecycle, IdleUnloadThenReloadGivesTheSameAnswer) {
  ServeProcess server({"--model", "nli=" + fixture_model("bert-tiny-nli"), "--idle-unload", "0.5"});
  ASSERT_TRUE(server.wait_ready()) << server.log();
  const auto port = server.port();
  const auto first = post_json(port, "/predict", json{{"inputs", kPremise}}.dump());
  ASSERT_EQ(first.status, 200);
  bool unloaded = false;
  for (int i = 0; i < 100 && !unloaded; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    unloaded = json::parse(get(port, "/v2/models/nli/ready").body)["ready"] == false;
  }
  EXPECT_TRUE(unloaded);
  const auto again = post_json(port, "/predict", json{{"inputs", kPremise}}.dump());
  EXPECT_EQ(again.status, 200) << again.body;
  EXPECT_EQ(again.body, first.body);
}

TEST(ServeLifecycle, SigtermCompletesEveryRequestInFlightAndExitsZero) {
  ServeProcess server({"--model", "nli=" + fixture_model("bert-tiny-nli")});
  ASSERT_TRUE(server.wait_ready()) << server.log();
  const auto port = server.port();
  std::vector<std::future<HttpResult>> in_flight;
  for (int i = 0; i < 12; ++i)
    in_flight.push_back(std::async(std::launch::async, [&, i] {
      std::vector<std::string> batch(4, long_text(30) + std::to_string(i));
      return post_json(port, "/predict", json{{"inputs", batch}}.dump());
    }));
  // Signal only once requests are admitted and not yet answered (the in-flight gauge), so the
  // drain has work to finish.
  bool admitted = false;
  for (const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
       !admitted && std::chrono::steady_clock::now() < deadline;)
    admitted = metric_sum(get(port, "/metrics").body, "onepass_inflight_requests") >= 1;
  ASSERT_TRUE(admitted) << server.log();
  server.signal(SIGTERM);
  int ok = 0;
  for (auto& f : in_flight) {
    try {
      const auto r = f.get();
      // Sent before the signal: 200; arrived after it: 503 with Connection: close.
      EXPECT_TRUE(r.status == 200 || (r.status == 503 && r.closed)) << r.status << r.body;
      ok += r.status == 200;
    } catch (...) {
      // Connecting after the listener closed is refused: that request was never in flight.
    }
  }
  EXPECT_GT(ok, 0);
  EXPECT_EQ(server.wait_exit(), 0) << server.log();
}

TEST(ServeLifecycle, ApiKeyGuardsEverythingButHealthAndMetrics) {
  ServeProcess server({"--model", "nli=" + fixture_model("bert-tiny-nli"), "--api-key", "k3y"});
  ASSERT_TRUE(server.wait_ready()) << server.log();
  const auto port = server.port();
  EXPECT_EQ(get(port, "/health").status, 200);
  EXPECT_EQ(get(port, "/metrics").status, 200);
  EXPECT_EQ(get(port, "/v2/health/ready").status, 200);
  EXPECT_EQ(post_json(port, "/predict", json{{"inputs", "a"}}.dump()).status, 401);
  EXPECT_EQ(get(port, "/info").status, 401);
  // Malformed and wrong keys, on an inference route and a metadata route.
  for (const char* value : {"Bearer wrong", "k3y", "Basic k3y", "Bearer", "Bearer k3y4"}) {
    SCOPED_TRACE(value);
    const HttpHeaders auth{{{"Authorization", value}}};
    const auto r = post_json(port, "/predict", json{{"inputs", "a"}}.dump(), auth);
    EXPECT_EQ(r.status, 401) << r.body;
    EXPECT_EQ(r.header("www-authenticate"), "Bearer");
    EXPECT_EQ(r.body.find("k3y"), std::string::npos) << "the key is never echoed";
    EXPECT_EQ(get(port, "/v2/models/nli", auth).status, 401);
  }
  EXPECT_EQ(post_json(port, "/predict", json{{"inputs", "a"}}.dump(),
                      HttpHeaders{{{"Authorization", "Bearer k3y"}}})
                .status,
            200);
  const auto metrics = get(port, "/metrics").body;
  EXPECT_NE(metrics.find("status=\"401\""), std::string::npos);
}

}  // namespace
}  // namespace onepass::testing
