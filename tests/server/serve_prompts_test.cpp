// End to end: a sentence-transformers folder (bert-tiny-st-embed: max_seq_length 32 below its
// 512 positions, prompts "query" and "passage") through the real `onepass serve` binary, TEI's
// /embed, /embed_all and /tokenize against golden.json (sentence-transformers' encode() rule,
// run with transformers): the input limit is the folder's max_seq_length, a prompt named per
// request or by default is joined before the text, and every wrong use is refused by name.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "serve_suite.h"
#include "tests/support/golden_file.h"
#include "tests/support/http_client.h"
#include "tests/support/paths.h"
#include "tests/support/serve_process.h"
#include "tests/support/temp_dir.h"

namespace onepass::testing {
namespace {

using nlohmann::json;

const std::string kModel = "bert-tiny-st-embed";

const json& golden() {
  static const json g = read_golden(kModel);
  return g;
}

const json& golden_case(const std::string& id) {
  for (const auto& c : golden()["cases"])
    if (c["id"] == id) return c;
  throw std::runtime_error("no golden case " + id);
}

// fp32 within 1e-4 of the golden's normalised mean (the folder's 1_Pooling says mean).
void expect_embedding(const json& got, const json& expected_case) {
  SCOPED_TRACE(expected_case["id"].get<std::string>());
  const auto& expected = expected_case["embedding"]["mean_l2"];
  ASSERT_EQ(got.size(), expected.size());
  double worst = 0;
  for (std::size_t i = 0; i < got.size(); ++i)
    worst = std::max(worst, std::abs(got[i].get<double>() - expected[i].get<double>()));
  EXPECT_LT(worst, 1e-4);
}

json embed(std::uint16_t port, const json& body, int expected_status = 200) {
  const auto r = post_json(port, "/embed", body.dump());
  EXPECT_EQ(r.status, expected_status) << r.body;
  return json::parse(r.body);
}

class ServePrompts : public ServeSuite<ServePrompts> {
 public:
  static std::vector<std::string> server_args() {
    return {"--model", "st=" + fixture_model(kModel)};
  }
};

TEST_F(ServePrompts, TheInputLimitIsTheFoldersMaxSeqLength) {
  const auto info = json::parse(get(port(), "/info").body);
  EXPECT_EQ(info["max_input_length"], 32);
  EXPECT_EQ(info["model_type"]["embedding"]["pooling"], "mean");

  // Every single-text case, truncated where sentence-transformers truncates it.
  json texts = json::array();
  std::vector<json> cases;
  for (const auto& c : golden()["cases"]) {
    if (c.contains("prompt_name") || c["text"] == "") continue;
    texts.push_back(c["text"]);
    cases.push_back(c);
  }
  ASSERT_GT(cases.size(), 20u);
  const auto answer = embed(port(), {{"inputs", texts}, {"truncate", true}});
  ASSERT_EQ(answer.size(), cases.size());
  for (std::size_t i = 0; i < cases.size(); ++i) expect_embedding(answer[i], cases[i]);

  // Without truncation a text over 32 tokens (but far under the 512 positions) is refused, and
  // the refusal names the limit.
  const auto r =
      post_json(port(), "/embed", json{{"inputs", golden_case("numbers")["text"]}}.dump());
  EXPECT_GE(r.status, 400);
  EXPECT_LT(r.status, 500);
  EXPECT_NE(r.body.find("limit of 32 tokens"), std::string::npos) << r.body;
}

TEST_F(ServePrompts, ANamedPromptIsJoinedBeforeTheText) {
  for (const auto& c : golden()["cases"]) {
    if (!c.contains("prompt_name")) continue;
    const auto answer = embed(
        port(), {{"inputs", c["text"]}, {"prompt_name", c["prompt_name"]}, {"truncate", true}});
    ASSERT_EQ(answer.size(), 1u);
    expect_embedding(answer[0], c);
  }
  // A list of texts: the prompt goes before each.
  const auto answer =
      embed(port(), {{"inputs", {golden_case("short_en")["text"], golden_case("german")["text"]}},
                     {"prompt_name", "query"},
                     {"truncate", true}});
  ASSERT_EQ(answer.size(), 2u);
  expect_embedding(answer[0], golden_case("short_en@query"));
  expect_embedding(answer[1], golden_case("german@query"));
  // No prompt named, none by default: the text alone.
  expect_embedding(embed(port(), {{"inputs", golden_case("short_en")["text"]}})[0],
                   golden_case("short_en"));
}

TEST_F(ServePrompts, ThePromptsTokensCountAndAreEmbedded) {
  const auto& c = golden_case("short_en@query");
  const auto r =
      post_json(port(), "/embed_all", json{{"inputs", c["text"]}, {"prompt_name", "query"}}.dump());
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(json::parse(r.body)[0].size(), c["num_tokens"]);

  const auto t =
      post_json(port(), "/tokenize", json{{"inputs", c["text"]}, {"prompt_name", "query"}}.dump());
  ASSERT_EQ(t.status, 200) << t.body;
  const auto tokens = json::parse(t.body)[0];
  ASSERT_EQ(tokens.size(), c["input_ids"].size());
  for (std::size_t i = 0; i < tokens.size(); ++i) EXPECT_EQ(tokens[i]["id"], c["input_ids"][i]);
  // Offsets point into prompt + text, as TEI's do.
  EXPECT_EQ(tokens[1]["text"], "que");
  EXPECT_EQ(tokens[1]["start"], 0);

  // "numbers" fits without the prompt only after truncation; with it, 32 is still the limit.
  const auto& long_case = golden_case("numbers@query");
  const auto refused = post_json(
      port(), "/embed", json{{"inputs", long_case["text"]}, {"prompt_name", "query"}}.dump());
  EXPECT_NE(refused.body.find("limit of 32 tokens"), std::string::npos) << refused.body;
}

TEST_F(ServePrompts, AnUnknownPromptIsRefusedWithTheKnownOnes) {
  for (const char* route : {"/embed", "/embed_all", "/tokenize"}) {
    SCOPED_TRACE(route);
    const auto r =
        post_json(port(), route, json{{"inputs", "a text"}, {"prompt_name", "document"}}.dump());
    EXPECT_EQ(r.status, 422) << r.body;
    const auto body = json::parse(r.body);
    const std::string error = body["error"];
    EXPECT_NE(error.find("no prompt named 'document'"), std::string::npos) << error;
    EXPECT_NE(error.find("'passage' 'query'"), std::string::npos) << error;
  }
  const auto r = post_json(port(), "/embed", json{{"inputs", "a"}, {"prompt_name", 3}}.dump());
  EXPECT_EQ(r.status, 422) << r.body;
  EXPECT_NE(r.body.find("prompt_name"), std::string::npos) << r.body;
}

// Cohere's embed routes: input_type picks the prompt of that meaning; truncate END (the
// default) cuts as sentence-transformers does, NONE refuses.
TEST_F(ServePrompts, CohereInputTypePicksThePrompt) {
  const auto& text = golden_case("short_en")["text"];
  for (const auto& [input_type, id] :
       std::vector<std::pair<std::string, std::string>>{{"search_query", "short_en@query"},
                                                        {"search_document", "short_en@passage"},
                                                        {"clustering", "short_en"}}) {
    SCOPED_TRACE(input_type);
    const auto r = post_json(port(), "/v2/embed",
                             json{{"model", "st"},
                                  {"texts", {text}},
                                  {"input_type", input_type},
                                  {"embedding_types", {"float"}}}
                                 .dump());
    ASSERT_EQ(r.status, 200) << r.body;
    const auto answer = json::parse(r.body);
    EXPECT_EQ(answer["response_type"], "embeddings_by_type");
    EXPECT_EQ(answer["texts"][0], text);
    EXPECT_EQ(answer["meta"]["api_version"]["version"], "2");
    ASSERT_EQ(answer["embeddings"]["float"].size(), 1u);
    expect_embedding(answer["embeddings"]["float"][0], golden_case(id));
  }
  // v1 without embedding_types: a plain list; a long text is cut at its end by default.
  const auto& numbers = golden_case("numbers");
  auto r =
      post_json(port(), "/v1/embed",
                json{{"texts", {text, numbers["text"]}}, {"input_type", "search_query"}}.dump());
  ASSERT_EQ(r.status, 200) << r.body;
  auto answer = json::parse(r.body);
  EXPECT_EQ(answer["response_type"], "embeddings_floats");
  ASSERT_EQ(answer["embeddings"].size(), 2u);
  expect_embedding(answer["embeddings"][0], golden_case("short_en@query"));
  expect_embedding(answer["embeddings"][1], golden_case("numbers@query"));
  // NONE refuses it; only float vectors are made; images are not embedded.
  r = post_json(
      port(), "/v2/embed",
      json{{"texts", {numbers["text"]}}, {"input_type", "clustering"}, {"truncate", "NONE"}}
          .dump());
  EXPECT_EQ(r.status, 400) << r.body;
  EXPECT_NE(r.body.find("limit of 32 tokens"), std::string::npos) << r.body;
  r = post_json(
      port(), "/v2/embed",
      json{{"texts", {text}}, {"input_type", "search_query"}, {"embedding_types", {"int8"}}}
          .dump());
  EXPECT_EQ(r.status, 400) << r.body;
  EXPECT_NE(json::parse(r.body)["message"].get<std::string>().find("'float'"), std::string::npos);
  r = post_json(port(), "/v2/embed", json{{"images", {"data:x"}}, {"input_type", "image"}}.dump());
  EXPECT_EQ(r.status, 400) << r.body;
}

// The default prompt: by the server's flag (name or text), else the folder's default_prompt_name.
TEST(ServeDefaultPrompt, ByNameByTextAndFromTheFolder) {
  const auto& text = golden_case("short_en")["text"];
  {
    ServeProcess server(
        {"--model", "st=" + fixture_model(kModel), "--default-prompt-name", "query"});
    ASSERT_TRUE(server.wait_ready()) << server.log();
    expect_embedding(embed(server.port(), {{"inputs", text}})[0], golden_case("short_en@query"));
    // A request's own prompt wins.
    expect_embedding(embed(server.port(), {{"inputs", text}, {"prompt_name", "passage"}})[0],
                     golden_case("short_en@passage"));
  }
  {
    ServeProcess server(
        {"--model", "st=" + fixture_model(kModel), "--default-prompt", "passage: "});
    ASSERT_TRUE(server.wait_ready()) << server.log();
    expect_embedding(embed(server.port(), {{"inputs", text}})[0], golden_case("short_en@passage"));
  }
  TempDir dir;
  std::filesystem::copy(fixture_model(kModel), dir.path() / "st",
                        std::filesystem::copy_options::recursive);
  std::ofstream(dir.path() / "st" / "config_sentence_transformers.json")
      << R"({"prompts": {"query": "query: ", "passage": "passage: "},
             "default_prompt_name": "query"})";
  {
    ServeProcess server({"--model", "st=" + (dir.path() / "st").string()});
    ASSERT_TRUE(server.wait_ready()) << server.log();
    expect_embedding(embed(server.port(), {{"inputs", text}})[0], golden_case("short_en@query"));
  }
  {
    // An empty --default-prompt turns the folder's default off.
    ServeProcess server({"--model", "st=" + (dir.path() / "st").string(), "--default-prompt", ""});
    ASSERT_TRUE(server.wait_ready()) << server.log();
    expect_embedding(embed(server.port(), {{"inputs", text}})[0], golden_case("short_en"));
  }
}

// (Both flags at once: tests/run_cli/info_cli_test.cpp, a usage error before serving.)
TEST(ServeDefaultPrompt, APromptNameTheFolderLacksIsNamed) {
  ServeProcess server({"--model", "st=" + fixture_model(kModel), "--default-prompt-name", "doc"});
  EXPECT_FALSE(server.wait_ready(3000));
  const auto r = post_json(server.port(), "/embed", json{{"inputs", "a"}}.dump());
  EXPECT_GE(r.status, 500) << r.body;
  // It reports itself not ready, and its metadata route names the failure as /embed does.
  const auto ready = get(server.port(), "/v2/models/st/ready");
  EXPECT_EQ(ready.status, 200) << ready.body;
  EXPECT_EQ(json::parse(ready.body)["ready"], false) << ready.body;
  const auto metadata = get(server.port(), "/v2/models/st");
  EXPECT_EQ(metadata.status, 503) << metadata.body;
  for (const auto& where : {r.body, metadata.body, server.log()}) {
    EXPECT_NE(where.find("--default-prompt-name 'doc' is not one of the prompts"),
              std::string::npos)
        << where;
  }
}

}  // namespace
}  // namespace onepass::testing
