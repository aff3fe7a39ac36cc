// End to end through the `onepass serve` binary: the per-text byte cap. A multi-megabyte text
// in any text field of any dialect (the fill-mask targets summed) is refused (422, the dialect's
// error shape) before it is tokenized or even admitted, with truncation on or off; the server
// answers correctly after.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "metrics_scrape.h"
#include "tests/support/http_client.h"
#include "tests/support/paths.h"
#include "tests/support/serve_process.h"

namespace onepass::testing {
namespace {

using nlohmann::json;

// Real words, so the text would tokenize into about 1.5 million tokens.
std::string megabytes_of_words(std::size_t megabytes) {
  std::string text;
  text.reserve(megabytes << 20);
  while (text.size() + 2 <= (megabytes << 20)) text += "a ";
  return text;
}

struct BytesCase {
  std::string path;
  json body;
  std::string model;  // X-Amzn-SageMaker-Target-Model; empty: none
};

std::string bytes_error_message(const std::string& path, const json& error) {
  if (path == "/invocations") {
    EXPECT_EQ(error["code"], 422);
    EXPECT_EQ(error["type"], "InternalServerException");
    return error["message"];
  }
  if (path == "/v1/embeddings") {
    EXPECT_EQ(error["error"]["type"], "invalid_request_error");
    return error["error"]["message"];
  }
  if (path == "/" || path.rfind("/v2/", 0) == 0) return error["error"];
  EXPECT_EQ(error["error_type"], "Validation");  // TEI
  return error["error"];
}

TEST(ServeInputBytes, AMultiMegabyteTextIsRefusedBeforeTokenizingInEveryDialectAndField) {
  ServeProcess server({"--model", "nli=" + fixture_model("bert-tiny-nli"), "--model",
                       "embed=" + fixture_model("bert-tiny-embed"), "--model",
                       "rerank=" + fixture_model("bert-tiny-rerank"), "--model",
                       "mlm=" + fixture_model("bert-tiny-splade"), "--auto-truncate"});
  ASSERT_TRUE(server.wait_ready()) << server.log();
  const auto port = server.port();
  const std::string premise = "A man is playing a guitar on a busy street corner.";
  const auto before = post_json(port, "/predict", json{{"inputs", premise}}.dump(), target("nli"));
  ASSERT_EQ(before.status, 200) << before.body;

  const std::string big = megabytes_of_words(3);
  const json kserve_text = {
      {"name", "text"}, {"shape", {1}}, {"datatype", "BYTES"}, {"data", {big}}};
  const json kserve_small = {
      {"name", "text"}, {"shape", {1}}, {"datatype", "BYTES"}, {"data", {"p"}}};
  const json kserve_pair = {
      {"name", "text_pair"}, {"shape", {1}}, {"datatype", "BYTES"}, {"data", {big}}};
  const json labels = {"sports", "music"};
  const std::vector<BytesCase> cases = {
      // SageMaker toolkit: text, either side of a pair, zero-shot sequence and label,
      // feature extraction; truncation asked for or not.
      {"/invocations", {{"inputs", big}}, "nli"},
      {"/invocations", {{"inputs", big}, {"parameters", {{"truncation", true}}}}, "nli"},
      {"/invocations", {{"inputs", {{"text", "p"}, {"text_pair", big}}}}, "nli"},
      {"/invocations", {{"inputs", {{{"text", big}, {"text_pair", "h"}}}}}, "nli"},
      {"/invocations", {{"inputs", big}, {"parameters", {{"candidate_labels", labels}}}}, "nli"},
      {"/invocations",
       {{"inputs", "p"}, {"parameters", {{"candidate_labels", {"x", big}}}}},
       "nli"},
      {"/invocations",
       {{"inputs", "p"},
        {"parameters",
         {{"candidate_labels", labels}, {"hypothesis_template", big.substr(2) + "{}"}}}},
       "nli"},
      {"/invocations", {{"inputs", {"a", big}}}, "embed"},
      // Fill-mask targets: each is tokenized for every text, so together they are one text.
      {"/invocations", {{"inputs", "a [MASK] b"}, {"parameters", {{"targets", big}}}}, "mlm"},
      {"/invocations",
       {{"inputs", {"a [MASK]"}}, {"parameters", {{"targets", {"ab", big.substr(2)}}}}},
       "mlm"},
      // The Hugging Face Inference API on POST /.
      {"/", {{"inputs", big}}, "nli"},
      {"/", {{"inputs", {big}}}, "embed"},
      {"/", {{"inputs", "[MASK]"}, {"parameters", {{"targets", {big}}}}}, "mlm"},
      // TEI: predict (text, pair), rerank (query, texts), embed, tokenize, zero_shot.
      {"/predict", {{"inputs", big}, {"truncate", true}}, "nli"},
      {"/predict", {{"inputs", {"p", big}}}, "nli"},
      {"/predict", {{"inputs", {{big}, {"p", "h"}}}}, "nli"},
      {"/rerank", {{"query", big}, {"texts", {"a", "b"}}, {"truncate", true}}, "rerank"},
      {"/rerank", {{"query", "q"}, {"texts", {"a", big}}}, "rerank"},
      {"/embed", {{"inputs", {"a", big}}, {"truncate", true}}, "embed"},
      {"/tokenize", {{"inputs", big}}, "nli"},
      {"/zero_shot", {{"inputs", big}, {"candidate_labels", labels}}, "nli"},
      {"/zero_shot", {{"inputs", "p"}, {"candidate_labels", {big}}}, "nli"},
      // KServe v2 BYTES: text and text_pair.
      {"/v2/models/nli/infer", {{"inputs", {kserve_text}}}, ""},
      {"/v2/models/nli/infer", {{"inputs", {kserve_small, kserve_pair}}}, ""},
      {"/v2/models/embed/infer", {{"inputs", {kserve_text}}}, ""},
      // OpenAI: a string and a list.
      {"/v1/embeddings", {{"input", big}, {"model", "embed"}}, ""},
      {"/v1/embeddings", {{"input", {"a", big}}, {"model", "embed"}}, ""},
  };
  const std::string admitted_before = get(port, "/metrics").body;
  for (const auto& c : cases) {
    SCOPED_TRACE(c.path + " " + c.body.dump().substr(0, 120));
    const auto r =
        post_json(port, c.path, c.body.dump(), c.model.empty() ? HttpHeaders{} : target(c.model));
    EXPECT_EQ(r.status, 422) << r.body.substr(0, 400);
    ASSERT_TRUE(json::accept(r.body)) << r.body.substr(0, 400);
    const std::string message = bytes_error_message(c.path, json::parse(r.body));
    // The rule is stated: the size, the limit (64 x 512 tokens is below the 64 KiB floor), and
    // that truncation does not help.
    EXPECT_NE(message.find("is 3145728 bytes"), std::string::npos) << message;
    EXPECT_NE(message.find("limit of 65536 bytes per text"), std::string::npos) << message;
    EXPECT_NE(message.find("before tokenizing, even with truncation"), std::string::npos)
        << message;
  }
  // None of them was admitted: the runtime recorded no request and no failure.
  const std::string admitted_after = get(port, "/metrics").body;
  for (const char* name :
       {"onepass_request_duration_seconds_count", "onepass_failed_requests_total"})
    EXPECT_EQ(metric_sum(admitted_after, name), metric_sum(admitted_before, name)) << name;

  // A long text under the cap is still served, truncated (--auto-truncate).
  std::string long_words;
  for (int i = 0; i < 1000; ++i) long_words += "guitar street corner ";
  ASSERT_LT(long_words.size(), 65536u);
  EXPECT_EQ(post_json(port, "/predict", json{{"inputs", long_words}}.dump(), target("nli")).status,
            200);
  // And the server answers exactly as before.
  EXPECT_EQ(post_json(port, "/predict", json{{"inputs", premise}}.dump(), target("nli")).body,
            before.body);
}

TEST(ServeInputBytes, TheFlagSetsTheCapExactlyAndLazyTokenizeWaitsForNoOne) {
  ServeProcess server(
      {"--model", "nli=" + fixture_model("bert-tiny-nli"), "--lazy", "--max-input-bytes", "4096"});
  const auto port = server.port();
  // The model is still loading: /tokenize, which never waits, answers 503.
  auto r = post_json(port, "/tokenize", R"({"inputs":"a b"})");
  EXPECT_EQ(r.status, 503) << r.body;
  EXPECT_NE(r.body.find("loading"), std::string::npos) << r.body;
  std::string words;
  while (words.size() < 4096) words += "guitar ";
  words.resize(4096);
  // 4096 bytes: tokenized (too many tokens without truncation, served with it).
  r = post_json(port, "/predict", json{{"inputs", words}}.dump());
  EXPECT_EQ(r.status, 422) << r.body;
  EXPECT_NE(r.body.find("tokens, more than the model's limit"), std::string::npos) << r.body;
  EXPECT_EQ(post_json(port, "/predict", json{{"inputs", words}, {"truncate", true}}.dump()).status,
            200);
  // 4097 bytes: refused before tokenizing, even with truncation, through /tokenize too.
  words += "x";
  for (const bool truncate : {false, true}) {
    r = post_json(port, "/predict", json{{"inputs", words}, {"truncate", truncate}}.dump());
    EXPECT_EQ(r.status, 422) << r.body;
    EXPECT_NE(r.body.find("is 4097 bytes, more than the limit of 4096 bytes per text"),
              std::string::npos)
        << r.body;
  }
  r = post_json(port, "/tokenize", json{{"inputs", words}}.dump());
  EXPECT_EQ(r.status, 422) << r.body;
  EXPECT_EQ(post_json(port, "/tokenize", R"({"inputs":"a b"})").status, 200);
}

}  // namespace
}  // namespace onepass::testing
