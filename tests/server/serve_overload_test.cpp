// End to end through the `onepass serve` binary and its real engine: admission at an exact
// count, and clients that disconnect while their request is queued. No sleep decides anything:
// the model is lazy and its config.json is held (HeldModel), so the requests that trigger its
// load wait, admitted, until the test releases it; the onepass_inflight_requests gauge says
// when they are all in.
#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <fstream>
#include <future>
#include <nlohmann/json.hpp>
#include <thread>

#include "held_model.h"
#include "metrics_scrape.h"
#include "tests/support/http_client.h"
#include "tests/support/paths.h"
#include "tests/support/serve_process.h"

namespace onepass::testing {
namespace {

using nlohmann::json;

// The fixture's golden cases that the server reproduces from text (see serve_goldens_test).
std::vector<json> golden_cases(std::size_t count) {
  std::ifstream in(fixture_model("bert-tiny-nli") + "/golden.json");
  const json g = json::parse(in);
  std::vector<json> out;
  for (auto c : g["cases"]) {
    if (c.contains("truncation") || c.contains("fast_input_ids")) continue;
    if (!c.contains("pair") && c["text"].get<std::string>().empty()) continue;
    c["id2label"] = g["id2label"];
    out.push_back(c);
    if (out.size() == count) break;
  }
  return out;
}

// TEI /predict body: a top-level list of two strings is one pair.
std::string predict_body(const json& c) {
  return json{{"inputs", c.contains("pair") ? c["pair"] : c["text"]}, {"raw_scores", true}}.dump();
}

// Every label's raw score equals the golden logit (1e-4), and the top label is the golden one.
void expect_golden(const HttpResult& r, const json& c) {
  SCOPED_TRACE(c["id"].get<std::string>());
  ASSERT_EQ(r.status, 200) << r.body;
  const json answer = json::parse(r.body);
  ASSERT_EQ(answer.size(), c["logits"].size());
  EXPECT_EQ(answer[0]["label"], c["label"]);
  for (const auto& entry : answer) {
    for (const auto& [id, label] : c["id2label"].items()) {
      if (label == entry["label"]) {
        EXPECT_NEAR(entry["score"].get<double>(), c["logits"][std::stoi(id)].get<double>(), 1e-4);
      }
    }
  }
}

double scrape(std::uint16_t port, const std::string& name, const std::string& filter = {}) {
  return metric_sum(get(port, "/metrics").body, name, filter);
}

// Polls the gauge until it reads `value`; false after 60 s (a broken server, not a slow one).
bool wait_gauge(std::uint16_t port, const std::string& name, double value) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (std::chrono::steady_clock::now() < deadline) {
    if (scrape(port, name) == value) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return false;
}

std::string raw_post(const std::string& target, const std::string& body) {
  return "POST " + target + " HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n" +
         "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body;
}

const std::string kPredict200 = R"(route="/predict",model="nli",status="200")";

TEST(ServeOverload, KInFlightAllowedKPlusNSentNGet429AndKGetGoldenAnswers) {
  constexpr int kAllowed = 3;
  HeldModel held(fixture_model("bert-tiny-nli"));
  held.allow(1);  // registration reads config.json once, before "listening"
  ServeProcess server({"--model", "nli=" + held.dir(), "--lazy", "--threads", "1",
                       "--max-concurrent-requests", std::to_string(kAllowed)},
                      held.env());
  const auto port = server.port();
  ASSERT_EQ(held.served(), 1);

  // K requests: the first triggers the load, which blocks on config.json; all K are admitted.
  const auto cases = golden_cases(kAllowed);
  ASSERT_EQ(cases.size(), static_cast<std::size_t>(kAllowed));
  std::vector<std::future<HttpResult>> admitted;
  for (const auto& c : cases)
    admitted.push_back(std::async(std::launch::async, [port, body = predict_body(c)] {
      return post_json(port, "/predict", body);
    }));
  ASSERT_TRUE(wait_gauge(port, "onepass_inflight_requests", kAllowed)) << server.log();

  // N more, in four dialects and one client batch of four inputs (rejected whole): every one
  // is 429 with Retry-After and the dialect's error body, decided before tokenizing.
  struct Extra {
    std::string target, body;
  };
  const std::vector<Extra> extra = {
      {"/predict", predict_body(cases[0])},
      {"/predict", json{{"inputs", {"a", "b", "c", "d"}}}.dump()},
      {"/invocations", json{{"inputs", "a"}}.dump()},
      {"/", json{{"inputs", "a"}}.dump()},
      {"/v2/models/nli/infer",
       R"({"inputs":[{"name":"text","shape":[1],"datatype":"BYTES","data":["a"]}]})"},
  };
  for (const auto& e : extra) {
    SCOPED_TRACE(e.target);
    const auto r = post_json(port, e.target, e.body);
    EXPECT_EQ(r.status, 429) << r.body;
    EXPECT_EQ(r.header("retry-after"), "1");
    const json error = json::parse(r.body);
    if (e.target == "/predict") {
      EXPECT_EQ(error["error_type"], "Overloaded");
    } else if (e.target == "/invocations") {
      EXPECT_EQ(error["code"], 429);
    } else {
      EXPECT_TRUE(error["error"].is_string());
    }
    EXPECT_NE(r.body.find("too many requests in flight (limit 3)"), std::string::npos) << r.body;
  }
  const std::string page = get(port, "/metrics").body;
  EXPECT_EQ(metric_sum(page, "onepass_inflight_requests"), kAllowed);
  EXPECT_EQ(metric_sum(page, "onepass_requests_total", "status=\"429\""), extra.size());
  EXPECT_EQ(metric_sum(page, "onepass_requests_total", kPredict200), 0);

  // Release the load: exactly the K admitted requests complete, each with its golden answer.
  held.allow(1);
  for (std::size_t i = 0; i < admitted.size(); ++i) expect_golden(admitted[i].get(), cases[i]);
  ASSERT_TRUE(wait_gauge(port, "onepass_inflight_requests", 0));
  EXPECT_EQ(scrape(port, "onepass_requests_total", kPredict200), kAllowed);
  EXPECT_EQ(scrape(port, "onepass_requests_total", "status=\"429\""), extra.size());
  // Capacity is back: a request is served again.
  expect_golden(post_json(port, "/predict", predict_body(cases[1])), cases[1]);
}

TEST(ServeOverload, AFloodedModelCannotTakeTheSlotsOfAnotherModel) {
  constexpr int kPerModel = 3;
  HeldModel held(fixture_model("bert-tiny-nli"));
  held.allow(1);
  ServeProcess server(
      {"--model", "nli=" + held.dir(), "--model", "other=" + fixture_model("bert-tiny-nli"),
       "--lazy", "--threads", "1", "--max-concurrent-requests", "8",
       "--max-concurrent-requests-per-model", std::to_string(kPerModel)},
      held.env());
  const auto port = server.port();
  const auto cases = golden_cases(kPerModel);
  // Load the other model first: lazy loads run one at a time, and the held one never finishes.
  expect_golden(post_json(port, "/predict", predict_body(cases[0]), target("other")), cases[0]);

  // The held model takes its own share and no more: the next request for it is 429 although the
  // server-wide limit (8) has room.
  std::vector<std::future<HttpResult>> flooded;
  for (const auto& c : cases)
    flooded.push_back(std::async(std::launch::async, [port, body = predict_body(c)] {
      return post_json(port, "/predict", body, target("nli"));
    }));
  ASSERT_TRUE(wait_gauge(port, "onepass_inflight_requests", kPerModel)) << server.log();
  const auto over = post_json(port, "/predict", predict_body(cases[0]), target("nli"));
  EXPECT_EQ(over.status, 429) << over.body;
  EXPECT_EQ(over.header("retry-after"), "1");
  EXPECT_NE(over.body.find("model 'nli' has too many requests in flight (limit 3 per model)"),
            std::string::npos)
      << over.body;

  // The other model is still served, with its golden answers, while the first stays held.
  for (const auto& c : cases) {
    const auto r = post_json(port, "/predict", predict_body(c), target("other"));
    expect_golden(r, c);
  }
  // The gauge drops each answer just after handing it over (runtime.cpp), so the other model's
  // last one may still count for a moment: wait for the held model's share alone.
  EXPECT_TRUE(wait_gauge(port, "onepass_inflight_requests", kPerModel));

  held.allow(1);
  for (std::size_t i = 0; i < flooded.size(); ++i) expect_golden(flooded[i].get(), cases[i]);
  ASSERT_TRUE(wait_gauge(port, "onepass_inflight_requests", 0));
}

TEST(ServeOverload, ClientsThatDisconnectWhileQueuedLeaveNothingBehind) {
  constexpr int kQueued = 16;
  HeldModel held(fixture_model("bert-tiny-nli"));
  held.allow(1);
  ServeProcess server({"--model", "nli=" + held.dir(), "--lazy", "--threads", "1"}, held.env());
  const auto port = server.port();
  const auto cases = golden_cases(4);

  // Each client sends a whole request and closes at once; the request is admitted and waits
  // for the held load with nobody left to answer.
  for (int i = 0; i < kQueued; ++i)
    raw_exchange(port, raw_post("/predict", predict_body(cases[i % cases.size()])), 0);
  ASSERT_TRUE(wait_gauge(port, "onepass_inflight_requests", kQueued)) << server.log();
  held.allow(1);
  // The orphaned work is computed or dropped, never answered to anyone, and its slots return.
  ASSERT_TRUE(wait_gauge(port, "onepass_inflight_requests", 0)) << server.log();
  for (const auto& c : cases) expect_golden(post_json(port, "/predict", predict_body(c)), c);

  // Many more, on the loaded model, from several threads at once: whole requests, client
  // batches and half-sent bodies, each connection closed right after writing.
  std::vector<std::thread> clients;
  for (int t = 0; t < 8; ++t)
    clients.emplace_back([&, t] {
      for (int i = 0; i < 40; ++i) {
        const auto& c = cases[(t + i) % cases.size()];
        std::string raw = raw_post("/predict", predict_body(c));
        if (i % 4 == 1)
          raw = raw_post(
              "/predict",
              json{{"inputs", {c.contains("pair") ? c["pair"][0] : c["text"], "b"}}}.dump());
        if (i % 4 == 2) raw.resize(raw.size() - 5);  // the body never arrives in full
        if (i % 4 == 3)
          raw = raw_post(
              "/v2/models/nli/infer",
              R"({"inputs":[{"name":"text","shape":[1],"datatype":"BYTES","data":["a b c"]}]})");
        raw_exchange(port, raw, 0);
      }
    });
  for (auto& t : clients) t.join();
  ASSERT_TRUE(wait_gauge(port, "onepass_inflight_requests", 0)) << server.log();
  EXPECT_EQ(scrape(port, "onepass_queue_depth"), 0);
  for (const auto& c : cases) expect_golden(post_json(port, "/predict", predict_body(c)), c);

  // A clean exit: under the sanitizer presets LeakSanitizer turns any leak into a failure here.
  server.signal(SIGTERM);
  EXPECT_EQ(server.wait_exit(), 0) << server.log();
}

}  // namespace
}  // namespace onepass::testing
