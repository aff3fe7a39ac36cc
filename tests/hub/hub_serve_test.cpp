// Hub ids through the real `onepass` binary against the loopback Hub (hub_server.py): issue 12's
// "done when" flow (`serve --model nli=acme/tiny-nli@v1` downloads with progress, serves the
// golden answers, restarts with HF_HUB_OFFLINE=1 and serves from the cache), a failed download
// as a failed model, HF_MODEL_ID / HF_MODEL_REVISION / HF_API_TOKEN / HF_TASK as the SageMaker
// inference toolkit reads them, and `onepass download` / `tokenize` with Hub ids.
#include <gtest/gtest.h>
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <thread>

#include "hub_server.h"
#include "tests/support/cli_runner.h"
#include "tests/support/golden_file.h"
#include "tests/support/http_client.h"
#include "tests/support/paths.h"
#include "tests/support/serve_process.h"
#include "tests/trace/otlp_decode.h"
#include "tests/trace/otlp_receiver.h"

namespace onepass::testing {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// Sets environment variables for one scope (empty value: unset) and restores them after.
class ScopedEnv {
 public:
  ScopedEnv(std::initializer_list<std::pair<const char*, std::string>> vars) {
    for (const auto& [name, value] : vars) {
      const char* old = std::getenv(name);
      saved_.emplace_back(name, old ? std::optional<std::string>(old) : std::nullopt);
      if (value.empty())
        ::unsetenv(name);
      else
        ::setenv(name, value.c_str(), 1);
    }
  }
  ~ScopedEnv() {
    for (const auto& [name, value] : saved_) {
      if (value)
        ::setenv(name, value->c_str(), 1);
      else
        ::unsetenv(name);
    }
  }

 private:
  std::vector<std::pair<const char*, std::optional<std::string>>> saved_;
};

std::vector<json> json_lines(const std::string& log) {
  std::vector<json> out;
  std::istringstream in(log);
  std::string line;
  while (std::getline(in, line)) {
    const json parsed = json::parse(line, nullptr, false);
    if (!parsed.is_discarded()) out.push_back(parsed);
  }
  return out;
}

json nli_fixture_golden() { return read_golden("bert-tiny-nli"); }

// The toolkit's raw logits for every plain-text golden case, within 1e-4.
void expect_golden_logits(std::uint16_t port, const std::string& model) {
  const json g = nli_fixture_golden();
  std::size_t checked = 0;
  for (const auto& c : g["cases"]) {
    if (c.contains("truncation") || c.contains("fast_input_ids") || c.contains("pair")) continue;
    SCOPED_TRACE(c["id"].get<std::string>());
    const json body = {{"inputs", c["text"]},
                       {"parameters", {{"top_k", nullptr}, {"function_to_apply", "none"}}}};
    const auto r = post_json(port, "/invocations", body.dump(), target(model));
    ASSERT_EQ(r.status, 200) << r.body;
    const json answer = json::parse(r.body);
    for (const auto& entry : answer) {
      for (const auto& [id, label] : g["id2label"].items()) {
        if (label == entry["label"]) {
          EXPECT_NEAR(entry["score"].get<double>(), c["logits"][std::stoi(id)].get<double>(), 1e-4);
        }
      }
    }
    EXPECT_EQ(answer[0]["label"], c["label"]);
    ++checked;
  }
  EXPECT_GE(checked, 5u);
}

class HubServe : public ::testing::Test {
 protected:
  void SetUp() override {
    cache_ = fs::temp_directory_path() /
             ("onepass_hub_serve_" + std::to_string(::getpid()) + "_" +
              ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(cache_);
    fs::create_directories(cache_);
  }
  void TearDown() override { fs::remove_all(cache_); }

  // The Hugging Face environment of a clean machine pointed at the loopback Hub.
  ScopedEnv hub_env(const std::string& offline = "") const {
    return ScopedEnv({{"HF_ENDPOINT", hub_.endpoint()},
                      {"HF_HUB_CACHE", (cache_ / "hub").string()},
                      {"HF_HOME", (cache_ / "home").string()},
                      {"HF_HUB_OFFLINE", offline},
                      {"HF_TOKEN", ""},
                      {"HF_API_TOKEN", ""},
                      {"HF_MODEL_ID", ""},
                      {"HF_MODEL_REVISION", ""},
                      {"HF_TASK", ""},
                      {"HF_HUB_DISABLE_PROGRESS_BARS", ""},
                      {"ONEPASS_MODEL", ""},
                      {"SAGEMAKER_MULTI_MODEL", ""},
                      {"ONEPASS_SAGEMAKER_MODEL_DIR", (cache_ / "no-opt-ml-model").string()},
                      {"ONEPASS_LOG_FORMAT", "json"}});
  }

  // `onepass ARGS` under a 60 s limit: a serve that should have refused would run forever.
  CliResult onepass(const std::vector<std::string>& args, const std::string& stdin_text = "") {
    return run_onepass(args, stdin_text, std::chrono::seconds(60));
  }

  HubServer hub_;
  fs::path cache_;
};

TEST_F(HubServe, DownloadsWithProgressServesGoldensThenServesOfflineFromTheCache) {
  {
    const auto env = hub_env();
    ServeProcess server({"--model", "nli=acme/tiny-nli@v1"});
    ASSERT_TRUE(server.wait_ready()) << server.log();
    expect_golden_logits(server.port(), "nli");
    server.signal(SIGTERM);
    EXPECT_EQ(server.wait_exit(), 0);
    // Progress: one download_progress line per file at least, the weights' with their size.
    bool weights_done = false;
    for (const auto& line : json_lines(server.log())) {
      if (line.value("event", "") == "download_progress" &&
          line.value("file", "") == "model.safetensors" && line.value("done", false)) {
        weights_done = true;
        EXPECT_EQ(line["total_bytes"].get<std::uint64_t>(),
                  fs::file_size(fixture_model("bert-tiny-nli") + "/model.safetensors"));
      }
    }
    EXPECT_TRUE(weights_done) << server.log();
  }
  const auto seen_online = hub_.log().size();
  {
    const auto env = hub_env("1");
    ServeProcess server({"--model", "nli=acme/tiny-nli@v1"});
    ASSERT_TRUE(server.wait_ready()) << server.log();
    expect_golden_logits(server.port(), "nli");
    EXPECT_EQ(server.log().find("download_progress"), std::string::npos);
  }
  EXPECT_EQ(hub_.log().size(), seen_online);  // offline: not one request
}

// The onepass.hub.resolve span (docs/tracing.md) of the `--model` Hub id `reference`, once the
// server exported it to `receiver`; nullopt after a few seconds.
std::optional<DecodedSpan> resolve_span(const OtlpReceiver& receiver,
                                        const std::string& reference) {
  for (int i = 0; i < 200; ++i) {
    for (const auto& span : all_spans(receiver.exports()))
      if (span.name == "onepass.hub.resolve" && span.attributes.count("onepass.hub.reference") &&
          span.attributes.at("onepass.hub.reference") == reference)
        return span;
    std::this_thread::sleep_for(std::chrono::milliseconds(25));
  }
  return std::nullopt;
}

TEST_F(HubServe, ModelIsNamedAfterTheRepo) {
  const auto env = hub_env();
  OtlpReceiver collector;
  ServeProcess server({"--model", "acme/tiny-nli@v1", "--otlp-endpoint", collector.url()},
                      {"OTEL_BSP_SCHEDULE_DELAY=20"});
  ASSERT_TRUE(server.wait_ready()) << server.log();
  // The download is traced.
  const auto resolved = resolve_span(collector, "acme/tiny-nli@v1");
  ASSERT_TRUE(resolved.has_value());
  EXPECT_EQ(resolved->attributes.at("gen_ai.request.model"), "tiny-nli");
  EXPECT_EQ(resolved->status_code, 0);
  const auto r =
      post_json(server.port(), "/invocations",
                json{{"inputs", "A man is playing a guitar on a busy street corner."}}.dump(),
                target("tiny-nli"));
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(json::parse(r.body)[0]["label"], "neutral");  // golden.json case short_en
}

// sentence-transformers' files come down with the weights: the pooling folder, the prompts and
// max_seq_length from an older release's file name, the Dense modules modules.json names.
TEST_F(HubServe, SentenceTransformersFilesComeWithTheModel) {
  const auto env = hub_env();
  ServeProcess server({"--model", "st=acme/st-legacy", "--model", "dense=acme/st-dense"});
  ASSERT_TRUE(server.wait_ready()) << server.log();
  {  // Dense modules: sentence-transformers' own pipeline output (golden.json).
    const json golden = read_golden("bert-tiny-st-dense");
    const auto& c = golden["cases"][0];
    const auto r =
        post_json(server.port(), "/embed", json{{"inputs", c["text"]}}.dump(), target("dense"));
    ASSERT_EQ(r.status, 200) << r.body;
    const auto got = json::parse(r.body)[0];
    const auto& expected = c["sentence_transformers"]["sentence_embedding"];
    ASSERT_EQ(got.size(), expected.size());
    for (std::size_t i = 0; i < got.size(); ++i)
      EXPECT_NEAR(got[i].get<double>(), expected[i].get<double>(), 1e-4);
  }
  const auto info = json::parse(get(server.port(), "/info", target("st")).body);
  EXPECT_EQ(info["max_input_length"], 32);
  EXPECT_EQ(info["model_type"]["embedding"]["pooling"], "mean");
  const json g = read_golden("bert-tiny-st-embed");
  for (const auto& c : g["cases"]) {
    if (c["id"] != "short_en@query") continue;
    const auto r =
        post_json(server.port(), "/embed",
                  json{{"inputs", c["text"]}, {"prompt_name", "query"}}.dump(), target("st"));
    ASSERT_EQ(r.status, 200) << r.body;
    const auto got = json::parse(r.body)[0];
    ASSERT_EQ(got.size(), c["embedding"]["mean_l2"].size());
    for (std::size_t i = 0; i < got.size(); ++i)
      EXPECT_NEAR(got[i].get<double>(), c["embedding"]["mean_l2"][i].get<double>(), 1e-4);
  }
}

// GLiNER repos come down as published: gliner_config.json (no config.json), the weights and the
// tokenizer; one without encoder_config names its backbone by Hub id, whose config.json comes
// from that repo (GLiNER's AutoConfig.from_pretrained(model_name)). Both answer /extract as
// GLiNER answered (golden.json, the same model saved both ways), and offline from the cache.
TEST_F(HubServe, GlinerReposDownloadAndExtractAsGliner) {
  const json tiny = read_golden("gliner-tiny-markerv0");
  // GLiNER's own answers from the folder saved without encoder_config, read back by GLiNER with
  // the backbone's config from model_name (tools/fixtures/gliner.py).
  const json published = read_golden("../gliner-published/gliner-tiny-markerv0-noenc");
  auto check = [&](std::uint16_t port, const std::string& model) {
    const json& golden = model == "g" ? tiny : published;
    std::size_t checked = 0;
    for (const auto& c : golden["cases"]) {
      if (checked == 6) break;
      SCOPED_TRACE(model + " " + c["id"].get<std::string>());
      const json body = {{"model", model},
                         {"text", c["text"]},
                         {"labels", c["labels"]},
                         {"threshold", c["threshold"]},
                         {"flat_ner", c["flat_ner"]},
                         {"multi_label", c["multi_label"]}};
      const auto r = post_json(port, "/extract", body.dump());
      ASSERT_EQ(r.status, 200) << r.body;
      const json got = json::parse(r.body)["entities"];
      ASSERT_EQ(got.size(), c["entities"].size()) << r.body;
      for (std::size_t e = 0; e < got.size(); ++e) {
        EXPECT_EQ(got[e]["start"], c["entities"][e]["start"]);
        EXPECT_EQ(got[e]["end"], c["entities"][e]["end"]);
        EXPECT_EQ(got[e]["label"], c["entities"][e]["label"]);
        EXPECT_NEAR(got[e]["score"].get<double>(), c["entities"][e]["score"].get<double>(), 1e-4);
      }
      ++checked;
    }
    EXPECT_EQ(checked, 6u);
  };
  // The published folder alone, before its backbone's config.json is in the cache: refused,
  // naming what is missing (offline: the cache is all there is).
  const std::string folder = fixture_model("../gliner-published/gliner-tiny-markerv0-noenc");
  {
    const auto offline = hub_env("1");
    const CliResult r = onepass({"info", folder});
    EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
    EXPECT_NE(r.out.find("model_name 'onepass-fixtures/deberta-v2-tiny'"), std::string::npos)
        << r.out;
  }
  // Online: the GLiNER repo, and the local folder, whose load downloads its backbone's
  // config.json.
  const fs::path backbone_cache = cache_ / "hub" / "models--onepass-fixtures--deberta-v2-tiny";
  {
    const auto env = hub_env();
    ServeProcess server({"--model", "g=acme/gliner-tiny", "--model", "local=" + folder});
    ASSERT_TRUE(server.wait_ready()) << server.log();
    check(server.port(), "g");
    check(server.port(), "local");
  }
  EXPECT_TRUE(fs::exists(backbone_cache));
  // `onepass download` of the published repo brings its backbone's config.json along.
  fs::remove_all(backbone_cache);
  {
    const auto env = hub_env();
    const CliResult r = onepass({"download", "acme/gliner-published"});
    EXPECT_EQ(r.exit_code, 0) << r.err;
  }
  EXPECT_TRUE(fs::exists(backbone_cache));
  // Offline from the cache: the repo, and the same folder as a local path (its backbone's
  // config.json now cached).
  const auto offline = hub_env("1");
  ServeProcess server({"--model", "p=acme/gliner-published", "--model", "local=" + folder});
  ASSERT_TRUE(server.wait_ready()) << server.log();
  check(server.port(), "p");
  check(server.port(), "local");
}

TEST_F(HubServe, FailedDownloadIsAFailedModelInPingMetricsAndLog) {
  const auto env = hub_env();
  OtlpReceiver collector;
  ServeProcess server({"--model", "broken=acme/no-such-repo", "--otlp-endpoint", collector.url()},
                      {"OTEL_BSP_SCHEDULE_DELAY=20"});
  const auto ping = get(server.port(), "/ping");
  EXPECT_EQ(ping.status, 503);
  const auto metrics = get(server.port(), "/metrics");
  EXPECT_NE(metrics.body.find("onepass_model_failed{model=\"broken\"} 1"), std::string::npos)
      << metrics.body;
  const auto r =
      post_json(server.port(), "/invocations", json{{"inputs", "x"}}.dump(), target("broken"));
  EXPECT_EQ(r.status / 100, 5) << r.body;
  EXPECT_NE(r.body.find("not found on the Hub"), std::string::npos) << r.body;
  bool logged = false;
  for (const auto& line : json_lines(server.log())) {
    if (line.value("event", "") == "model_load_failed" && line.value("model", "") == "broken") {
      logged = true;
      EXPECT_NE(line.value("error", "").find("acme/no-such-repo"), std::string::npos) << line;
    }
  }
  EXPECT_TRUE(logged) << server.log();
  const auto resolved = resolve_span(collector, "acme/no-such-repo");
  ASSERT_TRUE(resolved.has_value());
  EXPECT_EQ(resolved->status_code, 2);  // ERROR, with the reason
  EXPECT_NE(resolved->status_message.find("not found on the Hub"), std::string::npos);
}

TEST_F(HubServe, HfModelIdWithRevisionTokenAndTaskAsTheToolkitReadsThem) {
  const auto env = hub_env();
  // A gated repo with the toolkit's HF_API_TOKEN, at a revision, for the task it serves.
  const ScopedEnv sagemaker({{"HF_MODEL_ID", "acme/gated"},
                             {"HF_API_TOKEN", "secret-token"},
                             {"HF_TASK", "zero-shot-classification"}});
  ServeProcess server({});
  ASSERT_TRUE(server.wait_ready()) << server.log();
  expect_golden_logits(server.port(), "model");
  EXPECT_FALSE(hub_.requests("hub", "/api/models/acme/gated/revision/main").empty());
  // The token went to the Hub, never to the storage host.
  for (const auto& request : hub_.requests("cdn", "/blobs/"))
    EXPECT_TRUE(request["auth"].is_null());
}

TEST_F(HubServe, HfModelIdRevisionIsUsed) {
  const auto env = hub_env();
  const ScopedEnv sagemaker({{"HF_MODEL_ID", "acme/tiny-nli"}, {"HF_MODEL_REVISION", "v1"}});
  ServeProcess server({});
  ASSERT_TRUE(server.wait_ready()) << server.log();
  EXPECT_FALSE(hub_.requests("hub", "/api/models/acme/tiny-nli/revision/v1").empty());
  EXPECT_TRUE(hub_.requests("hub", "/api/models/acme/tiny-nli/revision/main").empty());
}

TEST_F(HubServe, HfTaskMismatchAndMissingTokenExitTwoNamingTheProblem) {
  const auto env = hub_env();
  {
    const ScopedEnv sagemaker(
        {{"HF_MODEL_ID", "acme/tiny-nli@v1"}, {"HF_TASK", "feature-extraction"}});
    const auto r = onepass({"serve", "--port", "0"});
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_NE(r.err.find("HF_TASK is 'feature-extraction'"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("text-classification"), std::string::npos) << r.err;
  }
  {
    // A task onepass serves, but not with this model: a mismatch, not "not served".
    const ScopedEnv sagemaker(
        {{"HF_MODEL_ID", "acme/tiny-nli@v1"}, {"HF_TASK", "token-classification"}});
    const auto r = onepass({"serve", "--port", "0"});
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_NE(r.err.find("HF_TASK is 'token-classification'"), std::string::npos) << r.err;
  }
  {
    const ScopedEnv sagemaker(
        {{"HF_MODEL_ID", "acme/tiny-nli@v1"}, {"HF_TASK", "question-answering"}});
    const auto r = onepass({"serve", "--port", "0"});
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_NE(r.err.find("HF_TASK is 'question-answering'"), std::string::npos) << r.err;
  }
  {
    const ScopedEnv sagemaker(
        {{"HF_MODEL_ID", "acme/tiny-nli@v1"}, {"HF_TASK", "text-generation"}});
    const auto r = onepass({"serve", "--port", "0"});
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_NE(r.err.find("HF_TASK 'text-generation' is not served"), std::string::npos) << r.err;
  }
  {
    // fill-mask is served, by masked-LM models only.
    const ScopedEnv sagemaker({{"HF_MODEL_ID", "acme/tiny-nli@v1"}, {"HF_TASK", "fill-mask"}});
    const auto r = onepass({"serve", "--port", "0"});
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_NE(r.err.find("HF_TASK is 'fill-mask'"), std::string::npos) << r.err;
  }
  {
    const ScopedEnv sagemaker({{"HF_MODEL_ID", "acme/gated"}});
    const auto r = onepass({"serve", "--port", "0"});
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_NE(r.err.find("set HF_TOKEN"), std::string::npos) << r.err;
  }
}

TEST_F(HubServe, DownloadPrintsTheSnapshotAndTokenizeTakesAHubId) {
  const auto env = hub_env();
  auto r = onepass({"download", "acme/tiny-nli@v1"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string commit = "models--acme--tiny-nli/snapshots/";
  ASSERT_NE(r.out.find(commit), std::string::npos) << r.out;
  const fs::path snapshot = r.out.substr(0, r.out.find('\n'));
  EXPECT_TRUE(fs::exists(snapshot / "model.safetensors"));
  // Not a terminal: one line per file when it completes (and every few seconds or 10%).
  EXPECT_NE(r.err.find("download model.safetensors"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("100%"), std::string::npos) << r.err;

  {
    const ScopedEnv quiet({{"HF_HUB_DISABLE_PROGRESS_BARS", "1"}});
    r = onepass({"download", "acme/tiny-nli"});  // main: a new snapshot, downloaded quietly
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(r.err, "");
  }

  const json c = nli_fixture_golden()["cases"][0];
  r = onepass({"tokenize", "--model", "acme/tiny-nli@v1"}, json{{"text", c["text"]}}.dump() + "\n");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(json::parse(r.out)["input_ids"], c["input_ids"]);

  r = onepass({"download", "acme/no-such-repo"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("not found on the Hub"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace onepass::testing
