// The SageMaker container contract through the `onepass serve` binary: with no --model it
// serves the model folder (/opt/ml/model; here ONEPASS_SAGEMAKER_MODEL_DIR points at a
// fixture), or starts empty with the multi-model routes under SAGEMAKER_MULTI_MODEL=true;
// SAGEMAKER_MAX_PAYLOAD_IN_MB sets the body limit; with --log-format json every stderr line is
// one JSON object, and the drain is logged.
#include <gtest/gtest.h>
#include <signal.h>
#include <stdlib.h>

#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>

#include "tests/support/http_client.h"
#include "tests/support/paths.h"
#include "tests/support/serve_process.h"

namespace onepass::testing {
namespace {

using nlohmann::json;

// Sets environment variables for one test and removes them after.
class ScopedEnv {
 public:
  ScopedEnv(std::initializer_list<std::pair<const char*, std::string>> vars) {
    for (const auto& [name, value] : vars) {
      ::setenv(name, value.c_str(), 1);
      names_.push_back(name);
    }
  }
  ~ScopedEnv() {
    for (const char* name : names_) ::unsetenv(name);
  }

 private:
  std::vector<const char*> names_;
};

std::vector<json> json_lines(const std::string& log) {
  std::vector<json> out;
  std::istringstream in(log);
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    const json parsed = json::parse(line, nullptr, false);
    EXPECT_FALSE(parsed.is_discarded()) << "not JSON: " << line;
    if (!parsed.is_discarded()) out.push_back(parsed);
  }
  return out;
}

std::size_t count_events(const std::vector<json>& lines, const std::string& event) {
  std::size_t n = 0;
  for (const auto& line : lines) n += line.value("event", "") == event;
  return n;
}

TEST(ServeSageMaker, NoModelFlagServesTheModelFolder) {
  ScopedEnv env({{"ONEPASS_SAGEMAKER_MODEL_DIR", fixture_model("bert-tiny-nli")},
                 {"ONEPASS_LOG_FORMAT", "json"},
                 {"SAGEMAKER_MAX_PAYLOAD_IN_MB", "1"},
                 {"SAGEMAKER_MODEL_SERVER_WORKERS", "4"}});
  ServeProcess server({});
  ASSERT_TRUE(server.wait_ready()) << server.log();
  auto r = post_json(server.port(), "/invocations",
                     json{{"inputs", "A man is playing a guitar on a busy street corner."}}.dump());
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(json::parse(r.body)[0]["label"], "neutral");  // golden.json case short_en
  // 1 MB from SAGEMAKER_MAX_PAYLOAD_IN_MB instead of the 6 MB default.
  r = post_json(server.port(), "/invocations",
                json{{"inputs", std::string(2 * 1024 * 1024, 'a')}}.dump());
  EXPECT_EQ(r.status, 413);

  server.signal(SIGTERM);
  EXPECT_EQ(server.wait_exit(), 0);
  const auto lines = json_lines(server.log());
  EXPECT_EQ(count_events(lines, "start"), 1u);
  EXPECT_EQ(count_events(lines, "model_load"), 1u);
  EXPECT_EQ(count_events(lines, "config_ignored"), 1u);  // the workers variable
  EXPECT_GE(count_events(lines, "request"), 2u);
  EXPECT_EQ(count_events(lines, "drain"), 2u);  // begin, done
  EXPECT_EQ(count_events(lines, "stopped"), 1u);
}

TEST(ServeSageMaker, MultiModelStartsEmptyAndLoadsThroughTheApi) {
  ScopedEnv env({{"SAGEMAKER_MULTI_MODEL", "true"},
                 {"ONEPASS_SAGEMAKER_MODEL_DIR", "/nonexistent"},
                 {"ONEPASS_LOG_FORMAT", "json"}});
  ServeProcess server({});
  ASSERT_TRUE(server.wait_ready()) << server.log();
  EXPECT_EQ(json::parse(get(server.port(), "/models").body)["models"].size(), 0u);
  auto r = post_json(server.port(), "/models",
                     json{{"model_name", "nli"}, {"url", fixture_model("bert-tiny-nli")}}.dump());
  ASSERT_EQ(r.status, 200) << r.body;
  r = post_json(server.port(), "/models/nli/invoke",
                json{{"inputs", "A man is playing a guitar on a busy street corner."}}.dump());
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(json::parse(r.body)[0]["label"], "neutral");
  EXPECT_EQ(http_request(server.port(), "DELETE", "/models/nli").status, 200);
  server.signal(SIGTERM);
  EXPECT_EQ(server.wait_exit(), 0);
  const auto lines = json_lines(server.log());
  EXPECT_EQ(count_events(lines, "model_load"), 1u);
  EXPECT_EQ(count_events(lines, "model_unload"), 1u);
}

TEST(ServeSageMaker, NoModelAnywhereIsAClearError) {
  ScopedEnv env({{"ONEPASS_SAGEMAKER_MODEL_DIR", "/nonexistent"}});
  try {
    ServeProcess server({});
    FAIL() << "onepass serve started without a model";
  } catch (const std::runtime_error& e) {
    // The start-up failure carries the server's stderr.
    EXPECT_NE(std::string(e.what()).find("SAGEMAKER_MULTI_MODEL"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace onepass::testing
