// The SageMaker container contract through the `onepass serve` binary: with no --model it
// serves the model folder (/opt/ml/model; here ONEPASS_SAGEMAKER_MODEL_DIR points at a
// fixture), or starts empty with the multi-model routes under SAGEMAKER_MULTI_MODEL=true;
// SAGEMAKER_MAX_PAYLOAD_IN_MB sets the body limit; with --log-format json every stderr line is
// one JSON object, and the drain is logged.
#include <gtest/gtest.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <filesystem>
#include <future>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>

#include "tests/support/files.h"
#include "tests/support/http_client.h"
#include "tests/support/paths.h"
#include "tests/support/serve_process.h"
#include "tests/support/temp_dir.h"

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

// POST /models on a fresh connection, with a bounded wait (a load that blocks the server would
// otherwise hang the test): the raw response, empty when none came within `timeout_ms`.
std::string post_models_raw(std::uint16_t port, const std::string& name,
                            const std::filesystem::path& dir, int timeout_ms = 5000) {
  const std::string body = json{{"model_name", name}, {"url", dir.string()}}.dump();
  return raw_exchange(port,
                      "POST /models HTTP/1.1\r\nHost: onepass\r\nContent-Type: application/json\r\n"
                      "Content-Length: " +
                          std::to_string(body.size()) + "\r\nConnection: close\r\n\r\n" + body,
                      timeout_ms);
}

int get_status_within(std::uint16_t port, const std::string& path, int timeout_ms) {
  return raw_status(raw_exchange(
      port, "GET " + path + " HTTP/1.1\r\nHost: onepass\r\nConnection: close\r\n\r\n", timeout_ms));
}

// A copy of a fixture folder made of links to its files, with `broken` replaced by what
// `plant` puts there.
std::filesystem::path planted_folder(
    const std::filesystem::path& root, const std::string& name, const std::string& broken,
    const std::function<void(const std::filesystem::path&)>& plant) {
  namespace fs = std::filesystem;
  const fs::path dir = root / name;
  fs::create_directories(dir);
  for (const auto& entry : fs::directory_iterator(fixture_model("bert-tiny-nli")))
    if (entry.path().filename() != broken)
      fs::create_symlink(entry.path(), dir / entry.path().filename());
  plant(dir / broken);
  return dir;
}

// Hostile model folders (docs/reliability.md "Lifecycle"): each POST /models gets its documented
// status at once, naming the file and never the folder, while health probes keep answering; a
// named pipe never holds an HTTP thread (it used to hold both, leaving /ping unanswered), a link
// to /dev/zero or a 128 MiB config.json is refused before it is read, and a missing folder is
// 404, not 400.
TEST(ServeSageMaker, HostileModelFoldersAreRefusedAtOnceAndHealthKeepsAnswering) {
  namespace fs = std::filesystem;
  ScopedEnv env(
      {{"SAGEMAKER_MULTI_MODEL", "true"}, {"ONEPASS_SAGEMAKER_MODEL_DIR", "/nonexistent"}});
  ServeProcess server({"--io-threads", "2"});
  ASSERT_TRUE(server.wait_ready()) << server.log();
  TempDir tmp("hostile_models");
  const auto fifo = [](const fs::path& path) { ASSERT_EQ(::mkfifo(path.c_str(), 0600), 0); };
  const auto zero = [](const fs::path& path) { fs::create_symlink("/dev/zero", path); };
  const auto huge = [](const fs::path& path) {
    write_text(path, "");
    fs::resize_file(path, std::uintmax_t{128} << 20);  // sparse: no disk, no time
  };

  // Two pipes at once, one per HTTP thread.
  const auto pipe_a = planted_folder(tmp.path(), "pipe_a", "config.json", fifo);
  const auto pipe_b = planted_folder(tmp.path(), "pipe_b", "config.json", fifo);
  auto a =
      std::async(std::launch::async, [&] { return post_models_raw(server.port(), "a", pipe_a); });
  auto b =
      std::async(std::launch::async, [&] { return post_models_raw(server.port(), "b", pipe_b); });
  EXPECT_EQ(get_status_within(server.port(), "/ping", 2000), 200);
  EXPECT_EQ(get_status_within(server.port(), "/v2/health/live", 2000), 200);
  for (auto* answer : {&a, &b}) {
    const std::string r = answer->get();
    EXPECT_EQ(raw_status(r), 400) << r;
    EXPECT_NE(r.find("config.json is not a regular file"), std::string::npos) << r;
    EXPECT_EQ(r.find(tmp.path().string()), std::string::npos) << r;
  }

  struct Case {
    std::string name;
    fs::path dir;
    int status;
    std::string message;
  };
  const std::vector<Case> cases = {
      {"zero", planted_folder(tmp.path(), "zero", "config.json", zero), 400,
       "config.json is not a regular file"},
      {"huge", planted_folder(tmp.path(), "huge", "config.json", huge), 400,
       "config.json is larger than the 8 MiB limit"},
      {"tokpipe", planted_folder(tmp.path(), "tokpipe", "tokenizer.json", fifo), 400,
       "tokenizer.json is not a regular file"},
      {"tokzero", planted_folder(tmp.path(), "tokzero", "tokenizer.json", zero), 400,
       "tokenizer.json is not a regular file"},
      {"weightpipe", planted_folder(tmp.path(), "weightpipe", "model.safetensors", fifo), 400,
       "model.safetensors is not a regular file"},
      {"missing", tmp.path() / "missing", 404, "does not exist"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    const std::string r = post_models_raw(server.port(), c.name, c.dir);
    EXPECT_EQ(raw_status(r), c.status) << r;
    EXPECT_NE(r.find(c.message), std::string::npos) << r;
    EXPECT_EQ(r.find(tmp.path().string()), std::string::npos) << r;
  }
  EXPECT_EQ(json::parse(get(server.port(), "/models").body)["models"].size(), 0u);
  // Still serving: a real folder loads and answers.
  const std::string r = post_models_raw(server.port(), "nli", fixture_model("bert-tiny-nli"));
  ASSERT_EQ(raw_status(r), 200) << r;
  const auto answer =
      post_json(server.port(), "/models/nli/invoke", json{{"inputs", "hello"}}.dump());
  EXPECT_EQ(answer.status, 200) << answer.body;
}

}  // namespace
}  // namespace onepass::testing
