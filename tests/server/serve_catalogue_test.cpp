// End to end through the `onepass serve` binary co-hosting three fixture models: the whole
// bad-input catalogue of docs/reliability.md with exact statuses and the dialect's error shape,
// against the real runtime and tokenizers; then the server still gives the same answers.
#include <gtest/gtest.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "tests/support/http_client.h"
#include "tests/support/paths.h"
#include "tests/support/serve_process.h"

namespace onepass::testing {
namespace {

using nlohmann::json;

struct Case {
  std::string method, path, body, content_type;
  HttpHeaders headers;
  int status;
  std::string body_has;  // a substring of the answer, when not empty
};

const std::string kJson = "application/json";

// Checks the error body against the dialect the route belongs to (docs/api.md).
void expect_error_shape(const std::string& path, int status, const std::string& body) {
  ASSERT_TRUE(json::accept(body)) << body;
  const json error = json::parse(body);
  if (path == "/invocations") {
    EXPECT_EQ(error["code"], status) << body;
    EXPECT_EQ(error["type"], "InternalServerException") << body;
    EXPECT_TRUE(error["message"].is_string()) << body;
  } else if (path == "/v1/embeddings") {
    EXPECT_TRUE(error["error"]["message"].is_string()) << body;
    EXPECT_TRUE(error["error"]["type"].is_string()) << body;
  } else if (path == "/v1/rerank" || path == "/v2/rerank") {
    // Cohere's {"message"}.
    EXPECT_TRUE(error["message"].is_string()) << body;
  } else if (path == "/classify" || path == "/score" || path == "/v1/score") {
    // vLLM's {"error":{"message","type","param","code"}}, code = the status.
    EXPECT_TRUE(error["error"]["message"].is_string()) << body;
    EXPECT_TRUE(error["error"]["type"].is_string()) << body;
    EXPECT_TRUE(error["error"].contains("param")) << body;
    EXPECT_EQ(error["error"]["code"], status) << body;
  } else if (path == "/predict" || path == "/rerank" || path == "/embed" || path == "/embed_all" ||
             path == "/tokenize" || path == "/zero_shot" || path == "/predict_tokens") {
    EXPECT_TRUE(error["error"].is_string()) << body;
    EXPECT_TRUE(error["error_type"].is_string()) << body;
  } else {
    EXPECT_TRUE(error["error"].is_string()) << body;
  }
}

// Sends each case; checks its status, the expected part of the answer and, for an error, the
// route's error shape and that the input is not echoed back.
void expect_cases(std::uint16_t port, const std::vector<Case>& cases) {
  for (const auto& c : cases) {
    SCOPED_TRACE(c.method + " " + c.path.substr(0, 80) + " " + c.body.substr(0, 120));
    const auto r = http_request(port, c.method, c.path, c.body, c.content_type, c.headers);
    EXPECT_EQ(r.status, c.status) << r.body.substr(0, 400);
    if (!c.body_has.empty()) {
      EXPECT_NE(r.body.find(c.body_has), std::string::npos) << r.body.substr(0, 400);
    }
    if (r.status >= 400) {
      expect_error_shape(c.path, r.status, r.body);
      EXPECT_LT(r.body.size(), 1024u) << "an error must not echo the input back";
    }
  }
}

TEST(ServeCatalogue, EveryBadInputOnTheRealServerThenStillCorrect) {
  ServeProcess server({"--model", "nli=" + fixture_model("bert-tiny-nli"), "--model",
                       "embed=" + fixture_model("bert-tiny-embed"), "--model",
                       "rerank=" + fixture_model("bert-tiny-rerank"), "--model",
                       "splade=" + fixture_model("bert-tiny-splade")});
  ASSERT_TRUE(server.wait_ready()) << server.log();
  const auto port = server.port();
  const std::string premise = "A man is playing a guitar on a busy street corner.";
  const auto before_predict =
      post_json(port, "/predict", json{{"inputs", premise}}.dump(), target("nli"));
  const auto before_embed =
      post_json(port, "/embed", json{{"inputs", premise}}.dump(), target("embed"));
  ASSERT_EQ(before_predict.status, 200) << before_predict.body;
  ASSERT_EQ(before_embed.status, 200) << before_embed.body;
  std::string long_words;
  for (int i = 0; i < 400; ++i) long_words += "guitar street corner ";
  const std::string long_name(4096, 'm');
  // Client text that an error names: 100 KB of it must come back as a short, escaped prefix,
  // in the body (under 1 KiB, checked for every case) and in the log line.
  const std::string huge(100000, 'p');
  const std::string huge_method(8000, 'X');
  const std::string quoted_prefix = "'" + std::string(64, 'p') + "'... (100000 bytes)";
  const auto with_prompt = [&](json body) {
    body["prompt_name"] = huge;
    return body.dump();
  };

  const std::vector<Case> cases = {
      // An unknown prompt name on every route that takes one, a KServe input name, a method.
      {"POST", "/embed", with_prompt({{"inputs", "a"}}), kJson, target("embed"), 422,
       "no prompt named " + quoted_prefix},
      {"POST", "/embed_all", with_prompt({{"inputs", "a"}}), kJson, target("embed"), 422,
       "no prompt named " + quoted_prefix},
      {"POST", "/tokenize", with_prompt({{"inputs", "a"}}), kJson, target("embed"), 422,
       "no prompt named " + quoted_prefix},
      {"POST", "/embed_sparse", with_prompt({{"inputs", "a"}}), kJson, target("splade"), 422,
       "no prompt named " + quoted_prefix},
      {"POST", "/similarity",
       json{{"inputs", {{"source_sentence", "a"}, {"sentences", {"b"}}}},
            {"parameters", {{"prompt_name", huge}}}}
           .dump(),
       kJson, target("embed"), 422, "no prompt named " + quoted_prefix},
      {"POST",
       "/v2/models/nli/infer",
       json{{"inputs", {{{"name", huge}, {"shape", {1}}, {"datatype", "BYTES"}, {"data", {"a"}}}}}}
           .dump(),
       kJson,
       {},
       400,
       "unknown input " + quoted_prefix},
      {"POST",
       "/v2/models/nli/infer",
       json{{"inputs",
             {{{"name", "\"\n\x01'"}, {"shape", {1}}, {"datatype", "BYTES"}, {"data", {"a"}}}}}}
           .dump(),
       kJson,
       {},
       400,
       R"(unknown input '\"\\x0a\\x01\\x27')"},
      {huge_method,
       "/predict",
       "",
       "",
       {},
       405,
       "method '" + std::string(64, 'X') + "'... (8000 bytes) is not allowed here"},
      // Not JSON, truncated, trailing garbage.
      {"POST", "/predict", "hello", kJson, target("nli"), 400, "not valid JSON"},
      {"POST", "/invocations", R"({"inputs":"a")", kJson, target("nli"), 400, "not valid JSON"},
      {"POST",
       "/v1/embeddings",
       R"({"input":"a","model":"embed"} x)",
       kJson,
       {},
       400,
       "not valid JSON"},
      // A NUL byte after the value: the parser must not stop there and answer the object.
      {"POST", "/predict", std::string(R"({"inputs":"a"})") + std::string("\0garbage\xff", 9),
       kJson, target("nli"), 400, "NUL byte at offset 14"},
      {"POST",
       "/v1/embeddings",
       std::string(R"({"input":"a",)") + std::string("\0", 1) + R"("model":"embed"})",
       kJson,
       {},
       400,
       "NUL byte at offset 13"},
      // Invalid UTF-8, lone surrogates (escaped and raw), overlong forms.
      {"POST", "/predict", "{\"inputs\":\"\xff\"}", kJson, target("nli"), 400, ""},
      {"POST", "/predict", R"({"inputs":"\ud800"})", kJson, target("nli"), 400, ""},
      {"POST", "/embed", R"({"inputs":"a\udc00b"})", kJson, target("embed"), 400, ""},
      {"POST", "/invocations", "{\"inputs\":\"\xed\xa0\x80\"}", kJson, target("nli"), 400, ""},
      {"POST", "/v2/models/nli/infer", "{\"inputs\":\"\xc0\xaf\"}", kJson, {}, 400, ""},
      {"POST",
       "/v1/embeddings",
       "{\"input\":\"\xf0\x80\x80\xaf\",\"model\":\"embed\"}",
       kJson,
       {},
       400,
       ""},
      // Missing or wrong Content-Type.
      {"POST", "/predict", R"({"inputs":"a"})", "", target("nli"), 415, ""},
      {"POST", "/invocations", R"({"inputs":"a"})", "text/plain", target("nli"), 415, ""},
      {"POST",
       "/v1/embeddings",
       R"({"input":"a","model":"embed"})",
       "application/x-www-form-urlencoded",
       {},
       415,
       ""},
      // Wrong type or nesting, missing fields: 422 in TEI and OpenAI, 400 in toolkit and KServe.
      {"POST", "/predict", R"({"inputs":5})", kJson, target("nli"), 422, ""},
      {"POST", "/predict", R"({"inputs":[[["a"]]]})", kJson, target("nli"), 422, ""},
      {"POST", "/predict", R"({"input":"a"})", kJson, target("nli"), 422, "missing field `inputs`"},
      {"POST", "/invocations", R"({"inputs":{"text_pair":"h"}})", kJson, target("nli"), 400, ""},
      {"POST", "/invocations", R"({"inputs":[["a"]]})", kJson, target("nli"), 400, ""},
      {"POST",
       "/v2/models/nli/infer",
       R"({"inputs":[{"name":"text","shape":[1],"datatype":"BYTES","data":[5]}]})",
       kJson,
       {},
       400,
       ""},
      {"POST", "/v2/models/nli/infer", R"({"outputs":[]})", kJson, {}, 400, ""},
      {"POST", "/v1/embeddings", R"({"input":{"a":1},"model":"embed"})", kJson, {}, 422, ""},
      {"POST", "/v1/embeddings", R"({"model":"embed"})", kJson, {}, 422, "'input' is required"},
      // Empty lists and empty strings.
      {"POST", "/invocations", R"({"inputs":[]})", kJson, target("nli"), 400,
       "cannot be an empty list"},
      {"POST", "/predict", R"({"inputs":[]})", kJson, target("nli"), 422, ""},
      {"POST", "/v2/models/nli/infer", R"({"inputs":[]})", kJson, {}, 400, ""},
      {"POST", "/v1/embeddings", R"({"input":[],"model":"embed"})", kJson, {}, 422, ""},
      {"POST", "/embed", R"({"inputs":""})", kJson, target("embed"), 400,
       R"("error_type":"Empty")"},
      {"POST", "/embed_all", R"({"inputs":""})", kJson, target("embed"), 400,
       R"("error_type":"Empty")"},
      {"POST", "/embed_all", R"({"inputs":[]})", kJson, target("embed"), 422, ""},
      {"POST", "/embed_all", R"({"inputs":"a"})", kJson, target("nli"), 422,
       "not an embedding model"},
      {"POST", "/predict", R"({"inputs":["p",""]})", kJson, target("nli"), 400,
       R"("error_type":"Empty")"},
      // NLI or rerank with a missing side, empty query, no documents.
      {"POST", "/rerank", R"({"query":"","texts":["a"]})", kJson, target("rerank"), 400,
       R"("error_type":"Empty")"},
      {"POST", "/rerank", R"({"query":"q","texts":[]})", kJson, target("rerank"), 422, ""},
      {"POST", "/rerank", R"({"texts":["a"]})", kJson, target("rerank"), 422,
       "missing field `query`"},
      {"POST", "/rerank", R"({"query":"q"})", kJson, target("rerank"), 422,
       "missing field `texts`"},
      {"POST",
       "/v2/models/nli/infer",
       R"({"inputs":[{"name":"text","shape":[2],"datatype":"BYTES","data":["a","b"]},{"name":"text_pair","shape":[1],"datatype":"BYTES","data":["c"]}]})",
       kJson,
       {},
       400,
       ""},
      // More items than the client batch limit (32), and more candidate labels than it.
      {"POST", "/embed", json{{"inputs", std::vector<std::string>(33, "a")}}.dump(), kJson,
       target("embed"), 422, "33"},
      {"POST", "/embed_all", json{{"inputs", std::vector<std::string>(33, "a")}}.dump(), kJson,
       target("embed"), 422, "33"},
      {"POST", "/invocations", json{{"inputs", std::vector<std::string>(33, "a")}}.dump(), kJson,
       target("nli"), 422, "33"},
      {"POST",
       "/v1/embeddings",
       json{{"input", std::vector<std::string>(33, "a")}, {"model", "embed"}}.dump(),
       kJson,
       {},
       422,
       "33"},
      {"POST", "/zero_shot",
       json{{"inputs", "a"}, {"candidate_labels", std::vector<std::string>(33, "x")}}.dump(), kJson,
       target("nli"), 422, "33 candidate labels"},
      // Too many tokens: 422 naming both counts (each "guitar street corner" is 8 WordPiece
      // tokens, gu ##it ##ar str ##ee ##t cor ##ner: 400 x 8 + [CLS] [SEP]); truncated: served.
      {"POST", "/predict", json{{"inputs", long_words}}.dump(), kJson, target("nli"), 422,
       "input has 3202 tokens, more than the model's limit of 512"},
      {"POST",
       "/v1/embeddings",
       json{{"input", long_words}, {"model", "embed"}}.dump(),
       kJson,
       {},
       422,
       "512"},
      {"POST", "/predict", json{{"inputs", long_words}, {"truncate", true}}.dump(), kJson,
       target("nli"), 200, ""},
      {"POST", "/invocations",
       json{{"inputs", long_words}, {"parameters", {{"truncation", true}}}}.dump(), kJson,
       target("nli"), 200, ""},
      // Token ids outside the vocabulary.
      {"POST",
       "/v2/models/nli/infer",
       R"({"inputs":[{"name":"input_ids","shape":[1,3],"datatype":"INT64","data":[12,999999,13]}]})",
       kJson,
       {},
       422,
       "vocabulary"},
      {"POST", "/v1/embeddings", R"({"input":[12,-1,13],"model":"embed"})", kJson, {}, 422, ""},
      // Unknown models and hostile names: 404 by header, path and body field.
      {"POST", "/invocations", R"({"inputs":"a"})", kJson, target("nope"), 404, ""},
      {"POST", "/invocations", R"({"inputs":"a"})", kJson, target("../nli"), 404, ""},
      {"POST", "/invocations", R"({"inputs":"a"})", kJson, target("nli/.."), 404, ""},
      {"POST", "/invocations", R"({"inputs":"a"})", kJson, target("/etc/passwd"), 404, ""},
      {"POST", "/invocations", R"({"inputs":"a"})", kJson, target("nli\\..\\x"), 404, ""},
      {"POST", "/invocations", R"({"inputs":"a"})", kJson, target("%2e%2e"), 404, ""},
      {"POST", "/invocations", R"({"inputs":"a"})", kJson, target(long_name), 404, ""},
      {"POST", "/invocations", R"({"inputs":"a"})", kJson, {}, 404, ""},
      {"POST", "/v2/models/%2e%2e/infer", "{}", kJson, {}, 404, ""},
      {"POST", "/v2/models/%2e%2e%2fnli/infer", "{}", kJson, {}, 404, ""},
      {"POST", "/v2/models/..%2F..%2Fetc%2Fpasswd/infer", "{}", kJson, {}, 404, ""},
      {"POST", "/v2/models/nli%00/infer", "{}", kJson, {}, 404, ""},
      {"POST", "/v2/models/" + long_name + "/infer", "{}", kJson, {}, 404, ""},
      {"GET", "/v2/models/%2e%2e", "", "", {}, 404, ""},
      {"POST",
       "/v1/embeddings",
       R"({"input":"a","model":"../embed"})",
       kJson,
       {},
       404,
       "model_not_found"},
      {"POST",
       "/v1/embeddings",
       R"({"input":"a","model":"embed\u0000"})",
       kJson,
       {},
       404,
       "model_not_found"},
      {"POST",
       "/v1/embeddings",
       json{{"input", "a"}, {"model", long_name}}.dump(),
       kJson,
       {},
       404,
       "model_not_found"},
      {"POST", "/predict", R"({"inputs":"a"})", kJson, target("embed/../nli"), 404, ""},
      // Wrong method, unknown route.
      {"GET", "/nope", "", "", {}, 404, R"({"error":"no route for 'GET' '/nope'"})"},
      {"GET", "/invocations", "", "", {}, 405, ""},
      {"DELETE", "/predict", "", "", {}, 405, ""},
      // Deep nesting and huge numbers: no stack overflow, a clean 400/422.
      {"POST", "/predict", std::string(100000, '[') + std::string(100000, ']'), kJson,
       target("nli"), 400, "nesting"},
      {"POST",
       "/v1/embeddings",
       R"({"input":"a","model":"embed","dimensions":1e999999})",
       kJson,
       {},
       400,
       "a number is out of range"},
      {"POST", "/predict", R"({"inputs":"a","x":-)" + std::string(100000, '9') + "e99999}", kJson,
       target("nli"), 400, "a number is out of range"},
      {"POST", "/invocations",
       R"({"inputs":"a","parameters":{"top_k":123456789012345678901234567890}})", kJson,
       target("nli"), 400, ""},
      {"POST", "/invocations", R"({"inputs":"a","parameters":{"max_length":18446744073709551615}})",
       kJson, target("nli"), 400, ""},
      {"POST", "/embed", R"({"inputs":"a","dimensions":99999999999999999999})", kJson,
       target("embed"), 422, ""},
      {"POST",
       "/v1/embeddings",
       R"({"input":[12,99999999999999999999,13],"model":"embed"})",
       kJson,
       {},
       422,
       ""},
      {"POST",
       "/v2/models/nli/infer",
       R"({"inputs":[{"name":"input_ids","shape":[1,99999999999],"datatype":"INT64","data":[12,13]}]})",
       kJson,
       {},
       400,
       ""},
      {"POST",
       "/v2/models/nli/infer",
       R"({"inputs":[{"name":"input_ids","shape":[1,2],"datatype":"INT64","data":[12,1e300]}]})",
       kJson,
       {},
       400,
       ""},
      // Whitespace-only, control characters, emoji/ZWJ, RTL marks and NUL: served.
      {"POST", "/predict", R"({"inputs":"   \t\n  "})", kJson, target("nli"), 200, ""},
      {"POST", "/predict",
       R"({"inputs":"a\u0000b \u200f\u202e\ud83d\udc68\u200d\ud83d\udc69 \t\u0001\u007f"})", kJson,
       target("nli"), 200, ""},
      {"POST", "/v1/embeddings", R"({"input":"\u0000","model":"embed"})", kJson, {}, 200, ""},
  };
  expect_cases(port, cases);

  // A NUL never cuts a string: "a\0b" is not "a".
  const auto with_nul = post_json(port, "/embed", R"({"inputs":"a\u0000b"})", target("embed"));
  const auto cut = post_json(port, "/embed", R"({"inputs":"a"})", target("embed"));
  ASSERT_EQ(with_nul.status, 200);
  EXPECT_NE(with_nul.body, cut.body);
  // After the whole catalogue: the same answers, byte for byte.
  EXPECT_EQ(post_json(port, "/predict", json{{"inputs", premise}}.dump(), target("nli")).body,
            before_predict.body);
  EXPECT_EQ(post_json(port, "/embed", json{{"inputs", premise}}.dump(), target("embed")).body,
            before_embed.body);
  // No log line holds the client's long text, nor grows with it.
  const std::string log = server.log();
  EXPECT_EQ(log.find(std::string(1000, 'p')), std::string::npos);
  EXPECT_EQ(log.find(std::string(100, 'X')), std::string::npos);
  std::size_t longest = 0;
  for (std::size_t start = 0; start < log.size();) {
    const std::size_t end = std::min(log.find('\n', start), log.size());
    longest = std::max(longest, end - start);
    start = end + 1;
  }
  EXPECT_LT(longest, 2048u) << "the longest log line";
}

// The token-classification routes' bad input, with a token classifier and a sequence classifier
// co-hosted; then the same entities as before.
TEST(ServeCatalogue, NerRoutesBadInputThenStillCorrect) {
  ServeProcess server({"--model", "ner=" + fixture_model("bert-tiny-ner"), "--model",
                       "nli=" + fixture_model("bert-tiny-nli"), "--max-client-batch-size", "4"});
  ASSERT_TRUE(server.wait_ready()) << server.log();
  const auto port = server.port();
  const std::string text = "Der Zug nach München fährt pünktlich um acht Uhr ab.";
  const std::string simple = json{{"inputs", text}, {"aggregation_strategy", "simple"}}.dump();
  const auto before = post_json(port, "/predict_tokens", simple, target("ner"));
  ASSERT_EQ(before.status, 200) << before.body;
  std::string long_words;
  for (int i = 0; i < 400; ++i) long_words += "guitar street corner ";
  const auto tokens = [](const json& body) { return body.dump(); };
  const std::vector<Case> cases = {
      // /predict_tokens: TEI's shapes and statuses.
      {"POST", "/predict_tokens", "hello", kJson, target("ner"), 400, "not valid JSON"},
      {"POST", "/predict_tokens", R"({"inputs":"a")", kJson, target("ner"), 400, ""},
      {"POST", "/predict_tokens", "{\"inputs\":\"\xff\"}", kJson, target("ner"), 400, ""},
      {"POST", "/predict_tokens", R"({"inputs":"a"})", "text/plain", target("ner"), 415, ""},
      {"POST", "/predict_tokens", R"({"input":"a"})", kJson, target("ner"), 422,
       "missing field `inputs`"},
      {"POST", "/predict_tokens", R"({"inputs":5})", kJson, target("ner"), 422, ""},
      {"POST", "/predict_tokens", R"({"inputs":[["a"]]})", kJson, target("ner"), 422, ""},
      {"POST", "/predict_tokens", R"({"inputs":[]})", kJson, target("ner"), 422, ""},
      {"POST", "/predict_tokens", R"({"inputs":""})", kJson, target("ner"), 400,
       R"("error_type":"Empty")"},
      {"POST", "/predict_tokens", tokens({{"inputs", std::vector<std::string>(5, "a")}}), kJson,
       target("ner"), 422, "5"},
      {"POST", "/predict_tokens", R"({"inputs":"a","aggregation_strategy":"longest"})", kJson,
       target("ner"), 422, "aggregation_strategy"},
      {"POST", "/predict_tokens", R"({"inputs":"a","parameters":{"aggregation_strategy":3}})",
       kJson, target("ner"), 422, ""},
      {"POST", "/predict_tokens", R"({"inputs":"a","ignore_labels":"O"})", kJson, target("ner"),
       422, "ignore_labels"},
      {"POST", "/predict_tokens", R"({"inputs":"a","ignore_labels":[1]})", kJson, target("ner"),
       422, "ignore_labels"},
      {"POST", "/predict_tokens", R"({"inputs":"a","parameters":[1]})", kJson, target("ner"), 422,
       "parameters"},
      {"POST", "/predict_tokens", R"({"inputs":"a","stride":4})", kJson, target("ner"), 422,
       "aggregation_strategy other than none"},
      {"POST", "/predict_tokens", R"({"inputs":"a","aggregation_strategy":"max","stride":-1})",
       kJson, target("ner"), 422, "stride"},
      {"POST", "/predict_tokens", R"({"inputs":"a","aggregation_strategy":"max","stride":"4"})",
       kJson, target("ner"), 422, "stride"},
      {"POST", "/predict_tokens", R"({"inputs":"a","aggregation_strategy":"max","stride":512})",
       kJson, target("ner"), 422, "less than the model's limit of 512"},
      {"POST", "/predict_tokens",
       R"({"inputs":"a","aggregation_strategy":"max","stride":1e999999})", kJson, target("ner"),
       400, "a number is out of range"},
      {"POST", "/predict_tokens", R"({"inputs":"a","truncation_direction":"up"})", kJson,
       target("ner"), 422, "truncation_direction"},
      // 3202 tokens: refused without truncation or stride; truncated, or 8 windows of 512 with
      // stride 100 (3200 content tokens, 410 new ones a window), above the client limit of 4.
      {"POST", "/predict_tokens", tokens({{"inputs", long_words}}), kJson, target("ner"), 422,
       "input has 3202 tokens, more than the model's limit of 512"},
      {"POST", "/predict_tokens", tokens({{"inputs", long_words}, {"truncate", true}}), kJson,
       target("ner"), 200, ""},
      {"POST", "/predict_tokens",
       tokens({{"inputs", long_words}, {"aggregation_strategy", "simple"}, {"stride", 100}}), kJson,
       target("ner"), 422, "windows"},
      {"POST", "/predict_tokens", R"({"inputs":"a"})", kJson, target("nli"), 422,
       "not a token classifier"},
      {"POST", "/predict_tokens", R"({"inputs":"a"})", kJson, target("nope"), 404, ""},
      {"POST", "/predict_tokens", R"({"inputs":"a"})", kJson, {}, 404, "several models"},
      {"GET", "/predict_tokens", "", "", {}, 405, ""},
      // The toolkit and the Inference API: 400 for a bad parameter.
      {"POST", "/invocations", R"({"inputs":"a","parameters":{"aggregation_strategy":"all"}})",
       kJson, target("ner"), 400, "aggregation_strategy"},
      {"POST", "/invocations", R"({"inputs":"a","parameters":{"stride":2}})", kJson, target("ner"),
       400, "stride"},
      {"POST", "/invocations",
       R"({"inputs":"a","parameters":{"aggregation_strategy":"simple","stride":6,"max_length":8}})",
       kJson, target("ner"), 200, ""},
      {"POST", "/invocations",
       tokens({{"inputs", long_words},
               {"parameters",
                {{"aggregation_strategy", "simple"}, {"stride", 2}, {"max_length", 8}}}}),
       kJson, target("ner"), 422, "windows"},
      {"POST", "/invocations", R"({"inputs":{"text":"a","text_pair":"b"}})", kJson, target("ner"),
       400, ""},
      {"POST",
       "/models/ner",
       R"({"inputs":"a","parameters":{"ignore_labels":{"O":1}}})",
       kJson,
       {},
       400,
       "ignore_labels"},
      // KServe v2.
      {"POST",
       "/v2/models/ner/infer",
       R"({"inputs":[{"name":"input_ids","shape":[1,3],"datatype":"INT64","data":[12,74,13]}],"outputs":[{"name":"entities"}]})",
       kJson,
       {},
       400,
       "needs 'text' inputs"},
      {"POST",
       "/v2/models/ner/infer",
       R"({"inputs":[{"name":"text","shape":[1],"datatype":"BYTES","data":["a"]}],"outputs":[{"name":"embeddings"}]})",
       kJson,
       {},
       400,
       "unknown output"},
      {"POST",
       "/v2/models/ner/infer",
       R"({"inputs":[{"name":"text","shape":[1],"datatype":"BYTES","data":["a"]},{"name":"text_pair","shape":[1],"datatype":"BYTES","data":["b"]}]})",
       kJson,
       {},
       400,
       "text_pair"},
      {"POST",
       "/v2/models/ner/infer",
       R"({"inputs":[{"name":"text","shape":[1],"datatype":"BYTES","data":["a"]}],"parameters":{"aggregation_strategy":"simple","stride":2}})",
       kJson,
       {},
       400,
       "stride"},
      {"POST",
       "/v2/models/ner/infer",
       R"({"inputs":[{"name":"text","shape":[1],"datatype":"BYTES","data":["a"]}],"parameters":"x"})",
       kJson,
       {},
       400,
       "parameters"},
      {"POST",
       "/v2/models/ner/infer",
       R"({"inputs":[{"name":"input_ids","shape":[1,3],"datatype":"INT64","data":[12,999999,13]}]})",
       kJson,
       {},
       422,
       "vocabulary"},
      {"POST",
       "/v2/models/ner/infer",
       R"({"inputs":[{"name":"input_ids","shape":[1,3],"datatype":"INT64","data":[12,74,13]}],"outputs":[{"name":"logits"}]})",
       kJson,
       {},
       200,
       R"("shape":[1,3,5])"},
      // The other routes refuse a token classifier in their own shape.
      {"POST", "/predict", R"({"inputs":"a"})", kJson, target("ner"), 422, "/predict_tokens"},
      {"POST", "/embed", R"({"inputs":"a"})", kJson, target("ner"), 422, ""},
      {"POST", "/rerank", R"({"query":"q","texts":["a"]})", kJson, target("ner"), 422, ""},
      {"POST", "/zero_shot", R"({"inputs":"a","candidate_labels":["x"]})", kJson, target("ner"),
       422, ""},
      {"POST", "/v1/embeddings", R"({"input":"a","model":"ner"})", kJson, {}, 422, ""},
      // Control characters, emoji, RTL marks and NUL: served.
      {"POST", "/predict_tokens",
       R"({"inputs":"a\u0000b \u200f\u202e\ud83d\udc68\u200d\ud83d\udc69 \t\u0001","aggregation_strategy":"average"})",
       kJson, target("ner"), 200, ""},
  };
  expect_cases(port, cases);
  EXPECT_EQ(post_json(port, "/predict_tokens", simple, target("ner")).body, before.body);
}

TEST(ServeCatalogue, TransportLimitsOnTheRealServer) {
  ServeProcess server(
      {"--model", "nli=" + fixture_model("bert-tiny-nli"), "--payload-limit", "100000"});
  ASSERT_TRUE(server.wait_ready()) << server.log();
  const auto port = server.port();
  // Body over the payload limit: 413 before the body is read (none is sent).
  auto response =
      raw_exchange(port,
                   "POST /predict HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                   "Content-Length: 50000000\r\n\r\n");
  EXPECT_EQ(raw_status(response), 413) << response;
  EXPECT_EQ(
      post_json(port, "/invocations", json{{"inputs", std::string(200000, 'a')}}.dump()).status,
      413);
  // Oversized and too many headers: 431.
  EXPECT_EQ(raw_status(raw_exchange(port, "GET /ping HTTP/1.1\r\nHost: x\r\nX-Big: " +
                                              std::string(20000, 'a') + "\r\n\r\n")),
            431);
  std::string many = "GET /ping HTTP/1.1\r\nHost: x\r\n";
  for (int i = 0; i < 150; ++i) many += "X-H" + std::to_string(i) + ": v\r\n";
  EXPECT_EQ(raw_status(raw_exchange(port, many + "\r\n")), 431);
  // Conflicting Content-Length and Transfer-Encoding: 400 and the connection closed.
  response = raw_exchange(port,
                          "POST /predict HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                          "Content-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n");
  EXPECT_EQ(raw_status(response), 400) << response;
  EXPECT_NE(response.find("Connection: close"), std::string::npos) << response;
  // Still serving.
  const auto r = post_json(port, "/predict", R"({"inputs":"a b"})");
  EXPECT_EQ(r.status, 200) << r.body;
}

// The catalogue on the Inference API routes, POST / and POST /models/{model}: the same decoder
// with the model chosen by the target header or by the path. Each bad body gets the same status
// and body on both; validation errors are 400 in this dialect (docs/api.md), an unknown or
// hostile name in the path 404. Then the same answers as before.
TEST(ServeCatalogue, InferenceApiRoutesBadInputThenStillCorrect) {
  ServeProcess server({"--model", "nli=" + fixture_model("bert-tiny-nli"), "--model",
                       "embed=" + fixture_model("bert-tiny-embed")});
  ASSERT_TRUE(server.wait_ready()) << server.log();
  const auto port = server.port();
  const std::string premise = json{{"inputs", "A man is playing a guitar."}}.dump();
  const auto before_nli = post_json(port, "/models/nli", premise);
  const auto before_embed = post_json(port, "/models/embed", premise);
  ASSERT_EQ(before_nli.status, 200) << before_nli.body;
  ASSERT_EQ(before_embed.status, 200) << before_embed.body;
  std::string long_words;
  for (int i = 0; i < 400; ++i) long_words += "guitar street corner ";

  struct BodyCase {
    std::string body, content_type;
    int status;
    std::string body_has;
  };
  const std::vector<BodyCase> bodies = {
      {"hello", kJson, 400, "not valid JSON"},
      {R"({"inputs":"a")", kJson, 400, "not valid JSON"},
      {R"({"inputs":"a"} x)", kJson, 400, "not valid JSON"},
      {std::string(R"({"inputs":"a"})") + std::string("\0garbage\xff", 9), kJson, 400,
       "NUL byte at offset 14"},
      {"{\"inputs\":\"\xff\"}", kJson, 400, ""},
      {R"({"inputs":"\ud800"})", kJson, 400, ""},
      {"{\"inputs\":\"\xc0\xaf\"}", kJson, 400, ""},
      {R"({"inputs":"a"})", "text/plain", 415, ""},
      {R"({"inputs":5})", kJson, 400, ""},
      {R"({"inputs":[["a"]]})", kJson, 400, ""},
      {R"({"inputs":{"text_pair":"h"}})", kJson, 400, ""},
      {R"({"inputs":[]})", kJson, 400, "cannot be an empty list"},
      {json{{"inputs", std::vector<std::string>(33, "a")}}.dump(), kJson, 422, "33"},
      {json{{"inputs", long_words}}.dump(), kJson, 422,
       "input has 3202 tokens, more than the model's limit of 512"},
      {json{{"inputs", long_words}, {"parameters", {{"truncation", true}}}}.dump(), kJson, 200, ""},
      {R"({"inputs":"a","parameters":{"top_k":0}})", kJson, 400, "top_k"},
      {R"({"inputs":"a","parameters":{"function_to_apply":"max"}})", kJson, 400,
       "function_to_apply"},
      {R"({"inputs":"a","parameters":{"max_length":18446744073709551615}})", kJson, 400, ""},
      {R"({"inputs":"a","parameters":{"long_input":"split"}})", kJson, 400, "long_input"},
      {R"({"inputs":"a","parameters":{"candidate_labels":[]}})", kJson, 400, ""},
      {std::string(100000, '[') + std::string(100000, ']'), kJson, 400, "nesting"},
      {R"({"inputs":"a\u0000b \u200f\ud83d\udc68\u200d\ud83d\udc69 \t\u0001"})", kJson, 200, ""},
      {R"({"inputs":"   "})", kJson, 200, ""},
  };
  for (const auto& c : bodies) {
    SCOPED_TRACE(c.body.substr(0, 100));
    const auto root = http_request(port, "POST", "/", c.body, c.content_type, target("nli"));
    const auto named = http_request(port, "POST", "/models/nli", c.body, c.content_type, {});
    EXPECT_EQ(root.status, c.status) << root.body.substr(0, 400);
    EXPECT_EQ(named.status, root.status) << named.body.substr(0, 400);
    EXPECT_EQ(named.body, root.body);
    if (!c.body_has.empty()) {
      EXPECT_NE(root.body.find(c.body_has), std::string::npos) << root.body.substr(0, 400);
    }
    if (root.status >= 400) {
      expect_error_shape("/", root.status, root.body);
      EXPECT_LT(root.body.size(), 1024u) << "an error must not echo the input back";
    }
  }
  // The path's model: unknown, hostile, or one whose task the body does not fit.
  const std::vector<Case> paths = {
      {"POST", "/models/nope", R"({"inputs":"a"})", kJson, {}, 404, "not loaded"},
      {"POST", "/models/..%2Fnli", R"({"inputs":"a"})", kJson, {}, 404, ""},
      {"POST", "/models/nli%00", R"({"inputs":"a"})", kJson, {}, 404, ""},
      {"POST", "/models/embed", R"({"inputs":{"text":"p","text_pair":"h"}})", kJson, {}, 400, ""},
      {"POST", "/", R"({"inputs":"a"})", kJson, {}, 404, "several models"},
      {"GET", "/models/nli", "", "", {}, 405, ""},
      {"DELETE", "/models/nli", "", "", {}, 405, ""},
  };
  for (const auto& c : paths) {
    SCOPED_TRACE(c.method + " " + c.path + " " + c.body.substr(0, 100));
    const auto r = http_request(port, c.method, c.path, c.body, c.content_type, c.headers);
    EXPECT_EQ(r.status, c.status) << r.body.substr(0, 400);
    if (!c.body_has.empty()) {
      EXPECT_NE(r.body.find(c.body_has), std::string::npos) << r.body.substr(0, 400);
    }
    // The path's other methods belong to SageMaker's model management (off here): its shape.
    if (r.status >= 400)
      expect_error_shape(c.status == 405 ? "/invocations" : c.path, r.status, r.body);
  }
  EXPECT_EQ(post_json(port, "/models/nli", premise).body, before_nli.body);
  EXPECT_EQ(post_json(port, "/models/embed", premise).body, before_embed.body);
}

// The catalogue on the routes RAG frameworks call: Cohere/Jina /v1|v2/rerank and vLLM /classify,
// /score. Both dialects answer a bad request with 400 (Cohere's "invalid request", vLLM's
// BadRequestError), an unknown model with 404, and the server's answers stay the same after.
TEST(ServeCatalogue, RerankAndClassifyRoutesOnTheRealServer) {
  ServeProcess server({"--model", "nli=" + fixture_model("bert-tiny-nli"), "--model",
                       "embed=" + fixture_model("bert-tiny-embed"), "--model",
                       "rerank=" + fixture_model("bert-tiny-rerank")});
  ASSERT_TRUE(server.wait_ready()) << server.log();
  const auto port = server.port();
  const std::string good_rerank = R"({"model":"rerank","query":"q","documents":["a b","c"]})";
  const std::string good_score = R"({"model":"rerank","text_1":"q","text_2":["a b","c"]})";
  const auto before_rerank = post_json(port, "/v1/rerank", good_rerank);
  const auto before_score = post_json(port, "/score", good_score);
  ASSERT_EQ(before_rerank.status, 200) << before_rerank.body;
  ASSERT_EQ(before_score.status, 200) << before_score.body;
  std::string long_words;
  for (int i = 0; i < 400; ++i) long_words += "guitar street corner ";
  const std::string long_name(4096, 'm');
  const std::vector<std::string> many(33, "a");

  std::vector<Case> cases;
  for (const std::string path : {"/v1/rerank", "/v2/rerank"}) {
    const std::vector<Case> rerank = {
        {"POST", path, "hello", kJson, {}, 400, "not valid JSON"},
        {"POST", path, R"({"query":"q","documents":["a"]} x)", kJson, {}, 400, ""},
        {"POST", path, "{\"query\":\"\xff\",\"documents\":[\"a\"]}", kJson, {}, 400, ""},
        {"POST", path, R"({"query":"\ud800","documents":["a"]})", kJson, {}, 400, ""},
        {"POST", path, good_rerank, "", {}, 415, ""},
        {"POST", path, good_rerank, "text/plain", {}, 415, ""},
        {"POST", path, "", kJson, {}, 400, ""},
        {"POST", path, "[1]", kJson, {}, 400, "object"},
        {"POST",
         path,
         R"({"model":"rerank","documents":["a"]})",
         kJson,
         {},
         400,
         "'query' is required"},
        {"POST",
         path,
         R"({"model":"rerank","query":"q"})",
         kJson,
         {},
         400,
         "'documents' is required"},
        {"POST", path, R"({"model":"rerank","query":5,"documents":["a"]})", kJson, {}, 400, ""},
        {"POST", path, R"({"model":"rerank","query":"q","documents":"a"})", kJson, {}, 400, ""},
        {"POST", path, R"({"model":"rerank","query":"q","documents":[5]})", kJson, {}, 400, ""},
        {"POST",
         path,
         R"({"model":"rerank","query":"q","documents":[{"title":"t"}]})",
         kJson,
         {},
         400,
         "'text'"},
        {"POST",
         path,
         R"({"model":"rerank","query":"q","documents":[{"text":"a","n":1}]})",
         kJson,
         {},
         400,
         ""},
        {"POST",
         path,
         R"({"model":"rerank","query":"","documents":["a"]})",
         kJson,
         {},
         400,
         "'query' cannot be empty"},
        {"POST",
         path,
         R"({"model":"rerank","query":"q","documents":["a",""]})",
         kJson,
         {},
         400,
         "empty"},
        {"POST",
         path,
         R"({"model":"rerank","query":"q","documents":[]})",
         kJson,
         {},
         400,
         "empty list"},
        {"POST",
         path,
         json{{"model", "rerank"}, {"query", "q"}, {"documents", many}}.dump(),
         kJson,
         {},
         400,
         "33 documents"},
        {"POST",
         path,
         R"({"model":"rerank","query":"q","documents":["a"],"top_n":-1})",
         kJson,
         {},
         400,
         "top_n"},
        {"POST",
         path,
         R"({"model":"rerank","query":"q","documents":["a"],"top_n":"2"})",
         kJson,
         {},
         400,
         "top_n"},
        {"POST",
         path,
         R"({"model":"rerank","query":"q","documents":["a"],"top_n":123456789012345678901234567890})",
         kJson,
         {},
         400,
         ""},
        {"POST",
         path,
         R"({"model":"rerank","query":"q","documents":["a"],"return_documents":1})",
         kJson,
         {},
         400,
         "return_documents"},
        {"POST",
         path,
         R"({"model":"rerank","query":"q","documents":["a"],"max_chunks_per_doc":0})",
         kJson,
         {},
         400,
         "max_chunks_per_doc"},
        {"POST",
         path,
         R"({"model":"rerank","query":"q","documents":["a"],"rank_fields":["t"]})",
         kJson,
         {},
         400,
         "rank_fields"},
        {"POST",
         path,
         R"({"model":"nli","query":"q","documents":["a"]})",
         kJson,
         {},
         400,
         "not a re-ranker"},
        {"POST",
         path,
         R"({"model":"embed","query":"q","documents":["a"]})",
         kJson,
         {},
         400,
         "not a re-ranker"},
        {"POST",
         path,
         R"({"model":"nope","query":"q","documents":["a"]})",
         kJson,
         {},
         404,
         "not loaded"},
        {"POST",
         path,
         R"({"model":"../rerank","query":"q","documents":["a"]})",
         kJson,
         {},
         404,
         ""},
        {"POST",
         path,
         R"({"model":"rerank\u0000","query":"q","documents":["a"]})",
         kJson,
         {},
         404,
         ""},
        {"POST",
         path,
         json{{"model", long_name}, {"query", "q"}, {"documents", {"a"}}}.dump(),
         kJson,
         {},
         404,
         ""},
        {"POST", path, R"({"query":"q","documents":["a"]})", kJson, {}, 404, "several models"},
        {"POST",
         path,
         std::string(100000, '[') + std::string(100000, ']'),
         kJson,
         {},
         400,
         "nesting"},
        {"GET", path, "", "", {}, 405, ""},
        // A long document is cut to fit (Cohere truncates), the whitespace-only, control and
        // emoji texts are served.
        {"POST",
         path,
         json{{"model", "rerank"}, {"query", "q"}, {"documents", {long_words}}}.dump(),
         kJson,
         {},
         200,
         ""},
        {"POST",
         path,
         R"({"model":"rerank","query":"   ","documents":["a\u0000b \u200f\ud83d\udc68\u200d\ud83d\udc69 \u0001"]})",
         kJson,
         {},
         200,
         ""},
    };
    cases.insert(cases.end(), rerank.begin(), rerank.end());
  }
  for (const std::string path : {"/score", "/v1/score"}) {
    const std::vector<Case> score = {
        {"POST", path, "hello", kJson, {}, 400, "not valid JSON"},
        {"POST", path, "{\"text_1\":\"\xc0\xaf\",\"text_2\":\"a\"}", kJson, {}, 400, ""},
        {"POST", path, good_score, "", {}, 415, ""},
        {"POST",
         path,
         R"({"model":"rerank","text_2":"a"})",
         kJson,
         {},
         400,
         "'text_1' is required"},
        {"POST",
         path,
         R"({"model":"rerank","text_1":"q"})",
         kJson,
         {},
         400,
         "'text_2' is required"},
        {"POST", path, R"({"model":"rerank","text_1":5,"text_2":"a"})", kJson, {}, 400, ""},
        {"POST", path, R"({"model":"rerank","text_1":"q","text_2":[["a"]]})", kJson, {}, 400, ""},
        {"POST",
         path,
         R"({"model":"rerank","text_1":["q1","q2"],"text_2":["a","b","c"]})",
         kJson,
         {},
         400,
         "Input lengths must be either 1:1, 1:N or N:N"},
        {"POST",
         path,
         R"({"model":"rerank","text_1":[],"text_2":["a"]})",
         kJson,
         {},
         400,
         "At least one text element must be given"},
        {"POST",
         path,
         R"({"model":"rerank","text_1":"q","text_2":[]})",
         kJson,
         {},
         400,
         "At least one text_pair element must be given"},
        {"POST",
         path,
         json{{"model", "rerank"}, {"text_1", "q"}, {"text_2", many}}.dump(),
         kJson,
         {},
         400,
         "33"},
        {"POST",
         path,
         json{{"model", "rerank"}, {"text_1", "q"}, {"text_2", long_words}}.dump(),
         kJson,
         {},
         400,
         "512"},
        {"POST",
         path,
         R"({"model":"rerank","text_1":"q","text_2":"a","truncate_prompt_tokens":-2})",
         kJson,
         {},
         400,
         "truncate_prompt_tokens"},
        {"POST",
         path,
         R"({"model":"rerank","text_1":"q","text_2":"a","truncate_prompt_tokens":0})",
         kJson,
         {},
         400,
         "truncate_prompt_tokens"},
        {"POST",
         path,
         R"({"model":"rerank","text_1":"q","text_2":"a","truncate_prompt_tokens":100000})",
         kJson,
         {},
         400,
         "greater than max_model_len (512)"},
        {"POST",
         path,
         R"({"model":"rerank","text_1":"q","text_2":"a","use_activation":"no"})",
         kJson,
         {},
         400,
         "use_activation"},
        {"POST",
         path,
         R"({"model":"nli","text_1":"q","text_2":"a"})",
         kJson,
         {},
         400,
         "not a re-ranker"},
        {"POST",
         path,
         R"({"model":"embed","text_1":"q","text_2":"a"})",
         kJson,
         {},
         400,
         "embedding model"},
        {"POST",
         path,
         R"({"model":"nope","text_1":"q","text_2":"a"})",
         kJson,
         {},
         404,
         "not loaded"},
        {"POST", path, R"({"model":"..","text_1":"q","text_2":"a"})", kJson, {}, 404, ""},
        {"POST", path, R"({"text_1":"q","text_2":"a"})", kJson, {}, 404, "several models"},
        {"POST",
         path,
         json{{"model", "rerank"},
              {"text_1", "q"},
              {"text_2", long_words},
              {"truncate_prompt_tokens", -1}}
             .dump(),
         kJson,
         {},
         200,
         ""},
        {"POST", path, R"({"model":"rerank","text_1":"","text_2":["","   "]})", kJson, {}, 200, ""},
    };
    cases.insert(cases.end(), score.begin(), score.end());
  }
  const std::vector<Case> classify = {
      {"POST", "/classify", "hello", kJson, {}, 400, "not valid JSON"},
      {"POST", "/classify", R"({"input":"\udc00"})", kJson, {}, 400, ""},
      {"POST", "/classify", R"({"model":"nli","input":"a"})", "", {}, 415, ""},
      {"POST", "/classify", R"({"model":"nli"})", kJson, {}, 400, "'input' is required"},
      {"POST", "/classify", R"({"model":"nli","input":5})", kJson, {}, 400, ""},
      {"POST", "/classify", R"({"model":"nli","input":[["a"]]})", kJson, {}, 400, ""},
      {"POST", "/classify", R"({"model":"nli","input":[]})", kJson, {}, 400, "empty list"},
      {"POST", "/classify", json{{"model", "nli"}, {"input", many}}.dump(), kJson, {}, 400, "33"},
      {"POST",
       "/classify",
       json{{"model", "nli"}, {"input", long_words}}.dump(),
       kJson,
       {},
       400,
       "input has 3202 tokens, more than the model's limit of 512"},
      {"POST",
       "/classify",
       R"({"model":"nli","input":"a","truncate_prompt_tokens":1e999999})",
       kJson,
       {},
       400,
       "a number is out of range"},
      {"POST",
       "/classify",
       R"({"model":"nli","input":"a","truncate_prompt_tokens":"8"})",
       kJson,
       {},
       400,
       "truncate_prompt_tokens"},
      {"POST", "/classify", R"({"model":"embed","input":"a"})", kJson, {}, 400, "embedding model"},
      {"POST", "/classify", R"({"model":"nope","input":"a"})", kJson, {}, 404, ""},
      {"POST", "/classify", R"({"model":"nli/..","input":"a"})", kJson, {}, 404, ""},
      {"POST", "/classify", R"({"input":"a"})", kJson, {}, 404, "several models"},
      {"DELETE", "/classify", "", "", {}, 405, ""},
      {"POST",
       "/classify",
       json{{"model", "nli"}, {"input", long_words}, {"truncate_prompt_tokens", 16}}.dump(),
       kJson,
       {},
       200,
       ""},
      {"POST",
       "/classify",
       R"({"model":"nli","input":["","   \t\n","a\u0000b \u202e"]})",
       kJson,
       {},
       200,
       ""},
  };
  cases.insert(cases.end(), classify.begin(), classify.end());
  expect_cases(port, cases);
  // The same answers after the whole catalogue (the id is per request).
  auto without_id = [](const std::string& body) {
    auto answer = json::parse(body);
    answer.erase("id");
    return answer;
  };
  EXPECT_EQ(without_id(post_json(port, "/v1/rerank", good_rerank).body),
            without_id(before_rerank.body));
  auto score = without_id(post_json(port, "/score", good_score).body);
  auto before = without_id(before_score.body);
  score.erase("created");
  before.erase("created");
  EXPECT_EQ(score, before);
}

}  // namespace
}  // namespace onepass::testing
