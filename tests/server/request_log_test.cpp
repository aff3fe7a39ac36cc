// The request log line, through the real server: one line per request, the request id kept or
// made and echoed, refusals with their reason, and never the body or the API key.
#include <gtest/gtest.h>

#include <chrono>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "base/log.h"
#include "in_process_server.h"
#include "tests/support/http_client.h"

namespace onepass::testing {
namespace {

using json = nlohmann::json;

std::mutex g_mutex;
std::vector<std::string> g_lines;

void capture(const std::string& line) {
  std::lock_guard lock(g_mutex);
  g_lines.push_back(line);
}

// Request lines carrying this id; the line is written just after the answer, so wait a little.
std::vector<json> lines_for(const std::string& id, std::size_t expected) {
  std::vector<json> found;
  for (int attempt = 0; attempt < 200; ++attempt) {
    found.clear();
    {
      std::lock_guard lock(g_mutex);
      for (const auto& line : g_lines) {
        const auto parsed = json::parse(line);  // every line is JSON
        if (parsed.value("event", "") == "request" && parsed.value("request_id", "") == id)
          found.push_back(parsed);
      }
    }
    if (found.size() >= expected) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return found;
}

class RequestLog : public ::testing::Test {
 protected:
  void SetUp() override {
    {
      std::lock_guard lock(g_mutex);
      g_lines.clear();
    }
    log::set_test_sink(capture);
    log::configure(log::Format::kJson, log::Level::kInfo);
  }
  void TearDown() override {
    log::set_test_sink(nullptr);
    log::configure(log::Format::kText, log::Level::kInfo);
  }
};

TEST_F(RequestLog, OneLinePerRequestWithIdAndNoSecrets) {
  api::ApiOptions options;
  options.api_key = "k3y-never-logged";
  InProcessServer server(options);
  const std::string body = R"({"inputs":"very private sentence"})";

  HttpHeaders headers = target("nli");
  headers.fields.push_back({"Authorization", "Bearer k3y-never-logged"});
  headers.fields.push_back({"X-Request-Id", "client-id-42"});
  auto r = post_json(server.port(), "/invocations", body, headers);
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(r.header("x-request-id"), "client-id-42");
  auto lines = lines_for("client-id-42", 1);
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0]["method"], "POST");
  EXPECT_EQ(lines[0]["route"], "/invocations");
  EXPECT_EQ(lines[0]["model"], "nli");
  EXPECT_EQ(lines[0]["status"], 200);
  EXPECT_EQ(lines[0]["inputs"], 1);
  EXPECT_GT(lines[0]["tokens"].get<int>(), 0);
  EXPECT_TRUE(lines[0]["latency_ms"].is_number());
  EXPECT_TRUE(lines[0]["queue_ms"].is_number());

  // No id sent: one is made, echoed, and names the line.
  headers.fields.pop_back();
  r = post_json(server.port(), "/invocations", body, headers);
  ASSERT_EQ(r.status, 200);
  const std::string made = r.header("x-request-id");
  ASSERT_EQ(made.size(), 32u);
  EXPECT_EQ(lines_for(made, 1).size(), 1u);

  // A refusal: logged at warn with its reason; an unsafe id is replaced.
  HttpHeaders bad = target("nli");
  bad.fields.push_back({"Authorization", "Bearer wrong-k3y-never-logged"});
  bad.fields.push_back({"X-Request-Id", "a b"});
  r = post_json(server.port(), "/invocations", body, bad);
  EXPECT_EQ(r.status, 401);
  const std::string replaced = r.header("x-request-id");
  EXPECT_NE(replaced, "a b");
  lines = lines_for(replaced, 1);
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0]["level"], "warn");
  EXPECT_EQ(lines[0]["status"], 401);
  EXPECT_NE(lines[0]["error"].get<std::string>().find("API key"), std::string::npos);

  std::lock_guard lock(g_mutex);
  EXPECT_EQ(g_lines.size(), 3u);
  for (const auto& line : g_lines) {
    EXPECT_EQ(line.find("private sentence"), std::string::npos) << line;
    EXPECT_EQ(line.find("k3y-never-logged"), std::string::npos) << line;
  }
}

}  // namespace
}  // namespace onepass::testing
