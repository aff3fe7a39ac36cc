// End to end: the real `onepass serve` binary with the GLiNER fixtures over HTTP. POST /extract
// in gliner.serve's shape answers what GLiNER's predict_entities answered for the same inputs
// (each fixture's golden.json, made by tools/fixtures/gliner.py with GLiNER's own code): the same
// spans, labels and order, scores within 1e-4; a list of texts answers a list; /invocations takes
// the toolkit's shape; bad requests get a 422 (404 for an unknown model) naming the problem.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <regex>

#include "serve_suite.h"
#include "tests/support/fixture_catalogue.h"
#include "tests/support/golden_file.h"
#include "tests/support/http_client.h"
#include "tests/support/paths.h"

namespace onepass::testing {
namespace {

using nlohmann::json;

const std::vector<std::string> kExtractModels = fixtures_with_task({FixtureTask::kExtractor});

class ServeExtract : public ServeSuite<ServeExtract> {
 public:
  static std::vector<std::string> server_args() {
    std::vector<std::string> args;
    for (const auto& m : kExtractModels) {
      args.push_back("--model");
      args.push_back(m + "=" + fixture_model(m));
    }
    return args;
  }
};

json request_of(const std::string& model, const json& c) {
  return json{{"model", model},
              {"text", c["text"]},
              {"labels", c["labels"]},
              {"threshold", c["threshold"]},
              {"flat_ner", c["flat_ner"]},
              {"multi_label", c["multi_label"]}};
}

void expect_entities(const json& got, const json& expected) {
  ASSERT_TRUE(got.is_array()) << got.dump();
  ASSERT_EQ(got.size(), expected.size()) << got.dump();
  for (std::size_t e = 0; e < got.size(); ++e) {
    EXPECT_EQ(got[e]["start"], expected[e]["start"]);
    EXPECT_EQ(got[e]["end"], expected[e]["end"]);
    EXPECT_EQ(got[e]["text"], expected[e]["text"]);
    EXPECT_EQ(got[e]["label"], expected[e]["label"]);
    EXPECT_NEAR(got[e]["score"].get<double>(), expected[e]["score"].get<double>(), 1e-4);
  }
}

TEST_F(ServeExtract, GlinerServeShapeAnswersGlinersEntities) {
  ASSERT_FALSE(kExtractModels.empty());
  HttpConnection connection(port());
  for (const std::string& model : kExtractModels) {
    SCOPED_TRACE(model);
    const json golden = read_golden(model);
    for (const json& c : golden["cases"]) {
      SCOPED_TRACE(c["id"].get<std::string>());
      const auto r = connection.request("POST", "/extract", request_of(model, c).dump());
      ASSERT_EQ(r.status, 200) << r.body;
      expect_entities(json::parse(r.body).at("entities"), c["entities"]);
    }
  }
}

TEST_F(ServeExtract, AListOfTextsAnswersAListAndInvocationsTakesTheToolkitShape) {
  const std::string model = kExtractModels.front();
  const json c = read_golden(model)["cases"][1];
  json body = request_of(model, c);
  body["text"] = json::array({c["text"], "", c["text"]});
  const auto list = post_json(port(), "/extract", body.dump());
  ASSERT_EQ(list.status, 200) << list.body;
  const json answers = json::parse(list.body);
  ASSERT_EQ(answers.size(), 3u);
  expect_entities(answers[0]["entities"], c["entities"]);
  EXPECT_TRUE(answers[1]["entities"].empty());  // GLiNER answers an empty text with nothing
  expect_entities(answers[2]["entities"], c["entities"]);

  const json toolkit = {{"inputs", c["text"]},
                        {"parameters",
                         {{"labels", c["labels"]},
                          {"threshold", c["threshold"]},
                          {"flat_ner", c["flat_ner"]},
                          {"multi_label", c["multi_label"]}}}};
  const auto invoked = post_json(port(), "/invocations", toolkit.dump(), target(model));
  ASSERT_EQ(invoked.status, 200) << invoked.body;
  expect_entities(json::parse(invoked.body).at("entities"), c["entities"]);
}

// "long_input": "chunk" over a text of 906 words (max_len 384): golden_chunk.json holds, for
// each case, GLiNER's own predict_entities run on every window's text (its greedy decoding
// bypassed to list every span over the threshold), the spans moved to the text's offsets and
// merged, and GLiNER's greedy_search over them (tools/fixtures/gliner.py run_chunk_cases).
TEST_F(ServeExtract, ChunkedLongTextsAnswerGlinersWindowsMerged) {
  const std::string model = "gliner-tiny-markerv0";
  const json golden = read_golden(model, "golden_chunk.json");
  const std::size_t max_len = golden["max_len"].get<std::size_t>();
  HttpConnection connection(port());
  std::size_t beyond = 0;  // entities past the first max_len words
  for (const json& c : golden["cases"]) {
    SCOPED_TRACE(c["id"].get<std::string>());
    json body = request_of(model, c);
    body["long_input"] = "chunk";
    body["stride"] = c["stride"];
    const auto r = connection.request("POST", "/extract", body.dump());
    ASSERT_EQ(r.status, 200) << r.body.substr(0, 300);
    expect_entities(json::parse(r.body).at("entities"), c["entities"]);

    // By default the words past max_len are not looked at, as in GLiNER.
    // GLiNER's words; the text is ASCII, so the code points are its bytes.
    const std::string text = c["text"].get<std::string>();
    static const std::regex word(R"(\w+(?:[-_]\w+)*|\S)");
    std::vector<std::uint32_t> starts;
    for (auto it = std::sregex_iterator(text.begin(), text.end(), word);
         it != std::sregex_iterator(); ++it)
      starts.push_back(static_cast<std::uint32_t>(it->position()));
    ASSERT_GT(starts.size(), max_len);
    const std::uint32_t unread = starts[max_len];
    for (const json& e : c["entities"]) beyond += e["start"].get<std::uint32_t>() >= unread;
    body.erase("long_input");
    body.erase("stride");
    const auto plain = connection.request("POST", "/extract", body.dump());
    ASSERT_EQ(plain.status, 200) << plain.body.substr(0, 300);
    const json plain_answer = json::parse(plain.body);  // the loop reads into it: keep it alive
    for (const json& e : plain_answer.at("entities"))
      EXPECT_LT(e["end"].get<std::uint32_t>(), unread) << e.dump();
  }
  EXPECT_GT(beyond, 10u);  // the chunked answers do find entities there

  // Texts of a list each get their own windows: the long text beside a short one answers as
  // alone, both times.
  const json& c = golden["cases"].back();
  json listed = request_of(model, c);
  listed["long_input"] = "chunk";
  listed["stride"] = c["stride"];
  listed["text"] = json::array({c["text"], "Angela Merkel lives in Berlin.", c["text"]});
  const auto list = connection.request("POST", "/extract", listed.dump());
  ASSERT_EQ(list.status, 200) << list.body.substr(0, 300);
  const json answers = json::parse(list.body);
  ASSERT_EQ(answers.size(), 3u);
  expect_entities(answers[0]["entities"], c["entities"]);
  expect_entities(answers[2]["entities"], c["entities"]);
  // --max-client-batch-size (32) counts windows: eleven such texts need 33.
  listed["text"] = json::array();
  for (int i = 0; i < 11; ++i) listed["text"].push_back(c["text"]);
  const auto many = connection.request("POST", "/extract", listed.dump());
  EXPECT_EQ(many.status, 422) << many.body;
  EXPECT_NE(many.body.find("33 windows"), std::string::npos) << many.body;

  // "reject" refuses the long text; a stride not below max_len is refused.
  json body = request_of(model, golden["cases"][0]);
  body["long_input"] = "reject";
  const auto rejected = post_json(port(), "/extract", body.dump());
  EXPECT_EQ(rejected.status, 422) << rejected.body;
  EXPECT_NE(rejected.body.find("max_len"), std::string::npos) << rejected.body;
  body["long_input"] = "chunk";
  body["stride"] = max_len;
  const auto stride = post_json(port(), "/extract", body.dump());
  EXPECT_EQ(stride.status, 422) << stride.body;
  EXPECT_NE(stride.body.find("stride"), std::string::npos) << stride.body;
}

TEST_F(ServeExtract, BadRequestsAreClientErrorsNamingTheProblem) {
  const std::string model = kExtractModels.front();
  auto body = [&](json fields) {
    json b = {{"model", model}, {"text", "Angela Merkel lives in Berlin."}, {"labels", {"person"}}};
    for (auto& [k, v] : fields.items()) {
      if (v.is_null()) {
        b.erase(k);
      } else {
        b[k] = v;
      }
    }
    return b.dump();
  };
  json many = json::array();
  for (int i = 0; i < 300; ++i) many.push_back("label " + std::to_string(i));
  const struct {
    std::string body;
    int status;
    std::string says;
  } cases[] = {
      {body({{"labels", nullptr}}), 422, "labels"},
      {body({{"labels", json::array()}}), 422, "at least one"},
      {body({{"labels", many}}), 422, "more than 100"},
      {body({{"labels", {"person", " "}}}), 422, "empty"},
      {body({{"labels", {"a <<ENT>> b"}}}), 422, "prompt tokens"},
      {body({{"labels", {1, 2}}}), 422, "list of strings"},
      {body({{"text", nullptr}}), 422, "text"},
      {body({{"text", 5}}), 422, "string"},
      {body({{"threshold", 2}}), 422, "threshold"},
      {body({{"flat_ner", "yes"}}), 422, "flat_ner"},
      {body({{"text", std::string(2 << 20, 'a')}}), 422, "bytes"},
      {body({{"model", "no-such-model"}}), 404, "no-such-model"},
      {body({{"long_input", "split"}}), 422, "long_input"},
      {body({{"long_input", "chunk"}, {"stride", -1}}), 422, "stride"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.body.substr(0, 160));
    const auto r = post_json(port(), "/extract", c.body);
    EXPECT_EQ(r.status, c.status) << r.body;
    ASSERT_TRUE(json::accept(r.body)) << r.body;
    EXPECT_NE(json::parse(r.body)["error"].get<std::string>().find(c.says), std::string::npos)
        << r.body;
  }
  // KServe v2 has no input for labels: its infer route refuses the model, naming what it is.
  const auto v2 = post_json(port(), "/v2/models/" + kExtractModels.front() + "/infer",
                            R"({"inputs":[{"name":"text","shape":[1],"datatype":"BYTES",)"
                            R"("data":["Paris"]}]})");
  EXPECT_EQ(v2.status, 400) << v2.body;
  EXPECT_NE(v2.body.find("entity extractor"), std::string::npos) << v2.body;
  // The server still answers.
  EXPECT_EQ(post_json(port(), "/extract", body({})).status, 200);
}

}  // namespace
}  // namespace onepass::testing
