// Transport limits, the bad-input catalogue, authentication, overload at an exact count,
// concurrency and drain, over real sockets against the in-process server and a FakeService.
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <future>
#include <nlohmann/json.hpp>
#include <thread>

#include "in_process_server.h"
#include "tests/support/http_client.h"

namespace onepass::testing {
namespace {

using nlohmann::json;

// Polls `done` until it holds or five seconds pass.
template <class Condition>
bool wait_for(Condition done) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (!done()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return true;
}

struct Case {
  std::string method, path, body, content_type;
  HttpHeaders headers;
  int status;
  std::string expected_body;  // exact when not empty
};

TEST(Transport, BadInputCatalogueExactStatusesAndBodies) {
  InProcessServer server;
  const auto port = server.port();
  const std::string json_type = "application/json";
  const std::vector<Case> cases = {
      // Not JSON, truncated, trailing garbage, invalid UTF-8, lone surrogate, overlong UTF-8.
      {"POST", "/predict", "hello", json_type, target("nli"), 400, ""},
      {"POST", "/predict", R"({"inputs":"a")", json_type, target("nli"), 400, ""},
      {"POST", "/predict", R"({"inputs":"a"} x)", json_type, target("nli"), 400, ""},
      {"POST", "/predict", "{\"inputs\":\"\xff\"}", json_type, target("nli"), 400, ""},
      {"POST", "/predict", R"({"inputs":"\ud800"})", json_type, target("nli"), 400, ""},
      {"POST", "/predict", "{\"inputs\":\"\xc0\xaf\"}", json_type, target("nli"), 400, ""},
      {"POST", "/invocations", "\xc0\xaf", json_type, target("nli"), 400, ""},
      // Missing or wrong Content-Type.
      {"POST", "/predict", R"({"inputs":"a"})", "", target("nli"), 415, ""},
      {"POST", "/predict", R"({"inputs":"a"})", "text/plain", target("nli"), 415, ""},
      {"POST", "/v1/embeddings", R"({"input":"a"})", "application/x-www-form-urlencoded",
       target("embed"), 415, ""},
      // Wrong types and missing fields: 422 in TEI and OpenAI, 400 in the toolkit and KServe.
      {"POST", "/predict", R"({"inputs":5})", json_type, target("nli"), 422, ""},
      {"POST", "/predict", R"({"input":"a"})", json_type, target("nli"), 422,
       R"({"error":"missing field `inputs`","error_type":"Validation"})"},
      {"POST", "/invocations", R"({"inputs":5})", json_type, target("nli"), 400, ""},
      {"POST", "/invocations", R"({"inputs":[]})", json_type, target("nli"), 400,
       R"({"code":400,"type":"InternalServerException","message":"'inputs' cannot be an empty list"})"},
      {"POST", "/invocations", R"({"inputs":"a","parameters":{"function_to_apply":"max"}})",
       json_type, target("nli"), 400, ""},
      {"POST", "/invocations",
       R"({"inputs":"a","parameters":{"candidate_labels":["x"],"hypothesis_template":"no slot"}})",
       json_type, target("nli"), 400, ""},
      {"POST", "/zero_shot",
       R"({"inputs":"a","candidate_labels":["x"],"hypothesis_template":"no slot"})", json_type,
       target("nli"), 422, ""},
      {"POST", "/zero_shot", R"({"inputs":"a","candidate_labels":[]})", json_type, target("nli"),
       422, ""},
      {"POST",
       "/v2/models/nli/infer",
       R"({"inputs":[{"name":"text","shape":[2],"datatype":"BYTES","data":["a"]}]})",
       json_type,
       {},
       400,
       ""},
      {"POST",
       "/v2/models/nli/infer",
       R"({"inputs":[]})",
       json_type,
       {},
       400,
       R"({"error":"'inputs' must be a non-empty list"})"},
      {"POST", "/v1/embeddings", R"({"input":[],"model":"embed"})", json_type, target("embed"), 422,
       ""},
      {"POST", "/v1/embeddings", R"({"input":{"a":1},"model":"embed"})", json_type, target("embed"),
       422, ""},
      // Empty strings: TEI's Empty.
      {"POST", "/embed", R"({"inputs":""})", json_type, target("embed"), 400,
       R"({"error":"`inputs` cannot be empty","error_type":"Empty"})"},
      {"POST", "/predict", R"({"inputs":["p",""]})", json_type, target("nli"), 400, ""},
      {"POST", "/rerank", R"({"query":"","texts":["a"]})", json_type, target("rerank"), 400, ""},
      {"POST", "/rerank", R"({"query":"q","texts":[]})", json_type, target("rerank"), 422,
       ""},  // empty list: docs/api.md 422
      {"POST", "/rerank", R"({"texts":["a"]})", json_type, target("rerank"), 422, ""},
      {"POST", "/rerank", R"({"query":"q","texts":["a"]})", json_type, target("nli"), 422, ""},
      // Too many tokens with truncation off; served with it on.
      {"POST", "/predict", json{{"inputs", std::string(100, ' ')}}.dump(), json_type, target("nli"),
       422, ""},
      {"POST", "/predict", json{{"inputs", std::string(100, ' ')}, {"truncate", true}}.dump(),
       json_type, target("nli"), 200, ""},
      // More inputs than the client batch limit (32).
      {"POST", "/embed", json{{"inputs", std::vector<std::string>(33, "a")}}.dump(), json_type,
       target("embed"), 422, ""},
      {"POST", "/invocations", json{{"inputs", std::vector<std::string>(33, "a")}}.dump(),
       json_type, target("nli"), 422, ""},
      // Unknown models and hostile names: 404, never a filesystem lookup.
      {"POST", "/v2/models/nope/infer", "{}", json_type, {}, 404, ""},
      {"POST", "/v2/models/%2e%2e/infer", "{}", json_type, {}, 404, ""},
      {"POST", "/v2/models/..%2Fetc/infer", "{}", json_type, {}, 404, ""},
      {"POST", "/v2/models/a%00b/infer", "{}", json_type, {}, 404, ""},
      {"POST", "/v2/models/" + std::string(4096, 'm') + "/infer", "{}", json_type, {}, 404, ""},
      {"POST", "/invocations", R"({"inputs":"a"})", json_type, target("../nli"), 404, ""},
      {"POST", "/invocations", R"({"inputs":"a"})", json_type, target("sub/../../nli.tar.gz"), 404,
       ""},
      {"POST", "/invocations", R"({"inputs":"a"})", json_type, target("sub/dir/nli.tar.gz"), 200,
       ""},
      {"POST", "/invocations", R"({"inputs":"a"})", json_type, {}, 404, ""},
      // Routes and methods.
      {"GET", "/nope", "", "", {}, 404, R"({"error":"no route for 'GET' '/nope'"})"},
      {"GET", "/invocations", "", "", {}, 405, ""},
      {"PUT", "/predict", "", "", {}, 405, ""},
      {"POST", "/models", R"({"model_name":"m","url":"/tmp"})", json_type, {}, 404, ""},
      // NaN guard.
      {"POST", "/predict", R"({"inputs":"__nan__"})", json_type, target("nli"), 424,
       R"({"error":"the model produced NaN or Inf for this input","error_type":"Backend"})"},
      // Deep nesting and huge numbers.
      {"POST", "/predict", std::string(100000, '[') + std::string(100000, ']'), json_type,
       target("nli"), 400, ""},
      {"POST", "/invocations", R"({"inputs":"a","parameters":{"top_k":1e999999}})", json_type,
       target("nli"), 400, ""},
      {"POST", "/invocations",
       R"({"inputs":"a","parameters":{"max_length":123456789012345678901234567890}})", json_type,
       target("nli"), 400, ""},
      // Control characters, NUL, emoji and RTL marks are served.
      {"POST", "/predict", R"({"inputs":"a\u0000b \u200f\ud83d\udc68\u200d\ud83d\udc69 \t\u0001"})",
       json_type, target("nli"), 200, ""},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.method + " " + c.path.substr(0, 80) + " " + c.body.substr(0, 80));
    const auto r = http_request(port, c.method, c.path, c.body, c.content_type, c.headers);
    EXPECT_EQ(r.status, c.status) << r.body;
    if (!c.expected_body.empty()) {
      EXPECT_EQ(r.body, c.expected_body);
    }
    if (r.status >= 400) {
      EXPECT_TRUE(json::accept(r.body)) << r.body;
    }
  }
  // Still correct afterwards.
  const auto r = post_json(port, "/predict", R"({"inputs":"a b"})", target("nli"));
  EXPECT_EQ(r.status, 200);
}

TEST(Transport, NulInsideAStringIsKept) {
  InProcessServer server;
  // The fake's output depends on every byte: "a\0b" must differ from "a".
  const auto with_nul = post_json(server.port(), "/embed",
                                  R"({"inputs":"a\u0000b","normalize":false})", target("embed"));
  const auto plain =
      post_json(server.port(), "/embed", R"({"inputs":"a","normalize":false})", target("embed"));
  ASSERT_EQ(with_nul.status, 200);
  EXPECT_NE(with_nul.body, plain.body);
}

TEST(Transport, OversizedBodyIs413BeforeReadingIt) {
  api::ApiOptions api_options;
  http::ServerOptions options;
  options.payload_limit_bytes = 1000;
  InProcessServer server(api_options, options);
  // Content-Length above the limit with no body sent: the answer comes anyway.
  const auto response = raw_exchange(server.port(),
                                     "POST /predict HTTP/1.1\r\nHost: x\r\nContent-Type: "
                                     "application/json\r\nContent-Length: 50000000\r\n\r\n");
  EXPECT_EQ(raw_status(response), 413) << response;
  EXPECT_NE(response.find("\"error_type\":\"Validation\""), std::string::npos) << response;
  // Chunked bodies are counted as they arrive.
  std::string chunked =
      "POST /invocations HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
      "Transfer-Encoding: chunked\r\n\r\n";
  for (int i = 0; i < 3; ++i) chunked += "200\r\n" + std::string(512, ' ') + "\r\n";
  chunked += "0\r\n\r\n";
  EXPECT_EQ(raw_status(raw_exchange(server.port(), chunked)), 413);
  EXPECT_EQ(
      post_json(server.port(), "/predict", json{{"inputs", std::string(2000, 'a')}}.dump()).status,
      413);
}

TEST(Transport, HeaderLimitsFramingAndMethods) {
  InProcessServer server;
  const auto port = server.port();
  std::string big =
      "GET /ping HTTP/1.1\r\nHost: x\r\nX-Big: " + std::string(20000, 'a') + "\r\n\r\n";
  EXPECT_EQ(raw_status(raw_exchange(port, big)), 431);
  std::string many = "GET /ping HTTP/1.1\r\nHost: x\r\n";
  for (int i = 0; i < 150; ++i) many += "X-H" + std::to_string(i) + ": v\r\n";
  many += "\r\n";
  EXPECT_EQ(raw_status(raw_exchange(port, many)), 431);
  const std::string conflict =
      "POST /predict HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 5\r\n"
      "Transfer-Encoding: chunked\r\n\r\n0\r\n\r\n";
  const auto response = raw_exchange(port, conflict);
  EXPECT_EQ(raw_status(response), 400) << response;
  EXPECT_NE(response.find("Connection: close"), std::string::npos) << response;
  EXPECT_EQ(raw_status(raw_exchange(port, "GARBAGE\r\n\r\n")), 400);
  // Keep-alive: several requests on one connection.
  HttpConnection connection(port);
  for (int i = 0; i < 5; ++i)
    EXPECT_EQ(
        connection
            .request("POST", "/predict", R"({"inputs":"x"})", "application/json", target("nli"))
            .status,
        200);
}

TEST(Transport, SlowClientIsTimedOutWithoutPinningAThread) {
  api::ApiOptions api_options;
  http::ServerOptions options;
  options.io_threads = 1;
  options.header_timeout = std::chrono::milliseconds(500);
  InProcessServer server(api_options, options);
  // A client that sends half a header and stalls; meanwhile the one I/O thread serves others.
  auto slow = std::async(std::launch::async, [&] {
    return raw_exchange(server.port(), "GET /ping HTTP/1.1\r\nHo", 5000);
  });
  // The stalled connection is accepted (it holds the one I/O thread's attention if anything does).
  ASSERT_TRUE(wait_for([&] { return server.server().open_connections() == 1; }));
  EXPECT_EQ(get(server.port(), "/ping").status, 200);
  const auto t0 = std::chrono::steady_clock::now();
  EXPECT_EQ(slow.get(), "");  // closed by the server, without an answer
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(3));
}

TEST(Transport, ApiKeyOnEveryRouteButHealth) {
  api::ApiOptions options;
  options.api_key = "s3cret";
  InProcessServer server(options);
  const auto port = server.port();
  for (const char* open : {"/ping", "/health", "/metrics", "/v2/health/live", "/v2/health/ready"})
    EXPECT_EQ(get(port, open).status, 200) << open;
  const std::vector<std::pair<std::string, std::string>> routes = {{"POST", "/invocations"},
                                                                   {"POST", "/"},
                                                                   {"POST", "/predict"},
                                                                   {"POST", "/rerank"},
                                                                   {"POST", "/embed"},
                                                                   {"POST", "/tokenize"},
                                                                   {"POST", "/zero_shot"},
                                                                   {"GET", "/info"},
                                                                   {"GET", "/v2"},
                                                                   {"GET", "/v2/models/nli"},
                                                                   {"POST", "/v2/models/nli/infer"},
                                                                   {"POST", "/v1/embeddings"},
                                                                   {"GET", "/v2/models/nli/ready"}};
  for (const auto& [method, path] : routes) {
    EXPECT_EQ(http_request(port, method, path, "{}").status, 401) << path;
    EXPECT_EQ(http_request(port, method, path, "{}", "application/json",
                           HttpHeaders{{{"Authorization", "Bearer wrong"}}})
                  .status,
              401)
        << path;
    EXPECT_EQ(http_request(port, method, path, "{}", "application/json",
                           HttpHeaders{{{"Authorization", "s3cret"}}})
                  .status,
              401)
        << path;
  }
  const auto r = http_request(port, "POST", "/v1/embeddings", "{}", "application/json",
                              HttpHeaders{{{"Authorization", "Bearer wrong"}}});
  EXPECT_EQ(json::parse(r.body)["error"]["code"], "invalid_api_key");
  EXPECT_EQ(post_json(port, "/predict", R"({"inputs":"a"})",
                      HttpHeaders{{{"Authorization", "Bearer s3cret"},
                                   {"X-Amzn-SageMaker-Target-Model", "nli"}}})
                .status,
            200);
}

TEST(Transport, OverloadAtAnExactCount) {
  InProcessServer server;
  constexpr int kAllowed = 6, kExtra = 4;
  server.service().set_max_in_flight(kAllowed);
  server.service().hold(true);
  std::vector<std::future<HttpResult>> accepted;
  for (int i = 0; i < kAllowed; ++i)
    accepted.push_back(std::async(std::launch::async, [&, i] {
      return post_json(server.port(), "/predict",
                       json{{"inputs", "text " + std::to_string(i)}}.dump(), target("nli"));
    }));
  while (server.service().queued() < static_cast<std::size_t>(kAllowed))
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  for (int i = 0; i < kExtra; ++i) {
    const auto r = post_json(server.port(), "/predict", R"({"inputs":"x"})", target("nli"));
    EXPECT_EQ(r.status, 429);
    EXPECT_EQ(r.header("retry-after"), "1");
    EXPECT_EQ(json::parse(r.body)["error_type"], "Overloaded");
  }
  server.service().hold(false);
  for (int i = 0; i < kAllowed; ++i) {
    const auto r = accepted[i].get();
    EXPECT_EQ(r.status, 200);
    // Each answer belongs to its own request.
    const auto alone =
        post_json(server.port(), "/predict", json{{"inputs", "text " + std::to_string(i)}}.dump(),
                  target("nli"));
    EXPECT_EQ(r.body, alone.body);
  }
}

// {"inputs":["p<i>","h"]}, built by appending: GCC 12 warns -Wrestrict on "p" + std::string&&.
std::string pair_body(int i) {
  std::string premise = "p";
  premise += std::to_string(i);
  return json{{"inputs", {premise, "h"}}}.dump();
}

TEST(Transport, SixtyFourConcurrentClientsGetTheirOwnAnswers) {
  InProcessServer server;
  const auto port = server.port();
  std::vector<std::string> alone(64);
  for (int i = 0; i < 64; ++i)
    alone[i] = post_json(port, "/predict", pair_body(i), target("nli")).body;
  std::vector<std::thread> clients;
  std::atomic<int> mismatches{0};
  for (int c = 0; c < 64; ++c)
    clients.emplace_back([&, c] {
      HttpConnection connection(port);
      for (int round = 0; round < 10; ++round) {
        const int i = (c + round) % 64;
        const auto r =
            connection.request("POST", "/predict", pair_body(i), "application/json", target("nli"));
        if (r.status != 200 || r.body != alone[i]) ++mismatches;
      }
    });
  for (auto& t : clients) t.join();
  EXPECT_EQ(mismatches.load(), 0);
}

TEST(Transport, DrainCompletesInFlightAndRefusesNewWork) {
  InProcessServer server;
  server.service().hold(true);
  std::vector<std::future<HttpResult>> in_flight;
  for (int i = 0; i < 4; ++i)
    in_flight.push_back(std::async(std::launch::async, [&, i] {
      return post_json(server.port(), "/predict", json{{"inputs", "t" + std::to_string(i)}}.dump(),
                       target("nli"));
    }));
  while (server.service().queued() < 4) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  HttpConnection idle(server.port());  // a keep-alive connection opened before the drain
  server.server().begin_drain();
  while (!server.server().draining()) std::this_thread::sleep_for(std::chrono::milliseconds(2));
  auto ping = idle.request("GET", "/ping");
  EXPECT_EQ(ping.status, 503);
  EXPECT_TRUE(ping.closed);
  HttpConnection late(server.port());
  auto refused =
      late.request("POST", "/predict", R"({"inputs":"x"})", "application/json", target("nli"));
  EXPECT_EQ(refused.status, 503);
  EXPECT_TRUE(refused.closed);
  server.service().hold(false);
  for (auto& f : in_flight) {
    const auto r = f.get();
    EXPECT_EQ(r.status, 200) << r.body;
  }
  server.join();  // run() returns once nothing is in flight
  EXPECT_EQ(server.server().in_flight(), 0u);
}

TEST(Transport, DrainAnswersConnectionsAlreadyAcceptedThenRefusesNewOnes) {
  InProcessServer server;
  server.service().hold(true);
  auto held = std::async(std::launch::async, [&] {
    return post_json(server.port(), "/predict", json{{"inputs", "t"}}.dump(), target("nli"));
  });
  while (server.service().queued() < 1) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  // Accepted while a request is in flight; its own request comes only after the last answer
  // left, when nothing is in flight: it must still get its 503, not a reset or silence.
  const int early = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(server.port());
  ASSERT_EQ(::connect(early, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  ASSERT_TRUE(wait_for([&] { return server.server().open_connections() == 2; }));
  server.server().begin_drain();
  while (!server.server().draining()) std::this_thread::sleep_for(std::chrono::milliseconds(2));
  server.service().hold(false);
  EXPECT_EQ(held.get().status, 200);
  ASSERT_TRUE(wait_for([&] { return server.server().in_flight() == 0; }));
  const std::string ping = "GET /ping HTTP/1.1\r\nHost: x\r\n\r\n";
  ASSERT_EQ(::send(early, ping.data(), ping.size(), MSG_NOSIGNAL),
            static_cast<ssize_t>(ping.size()));
  std::string answer;
  char buf[4096];
  pollfd pfd{early, POLLIN, 0};
  while (::poll(&pfd, 1, 2000) > 0) {
    const ssize_t n = ::recv(early, buf, sizeof(buf), 0);
    if (n <= 0) break;
    answer.append(buf, static_cast<std::size_t>(n));
  }
  ::close(early);
  EXPECT_EQ(raw_status(answer), 503) << answer;
  EXPECT_NE(answer.find("Connection: close"), std::string::npos) << answer;
  // The listener closes once nothing is in flight (polled every 10 ms): from then on a new
  // connection is refused; until then it is answered 503. One whose handshake the kernel
  // completes in the instant between the server's last accept and its close is reset by the
  // kernel with no byte read (no server can answer what it never accepted): that one counts as
  // neither, and the loop goes on until a connect is refused.
  EXPECT_TRUE(wait_for([&] {
    try {
      const std::string late = raw_exchange(server.port(), ping, 500);
      if (!late.empty()) {
        EXPECT_EQ(raw_status(late), 503) << late;
      }
      return false;
    } catch (const std::exception&) {
      return true;
    }
  }));
  server.join();
}

}  // namespace
}  // namespace onepass::testing
