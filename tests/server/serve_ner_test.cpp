// End to end: the real `onepass serve` binary with the bert-tiny-ner fixture, over HTTP, on every
// route that serves a token classifier (/invocations, POST /, /predict_tokens, KServe v2).
// Expected entities are worked here from the fixture's golden.json (per-token logits and tokens
// from transformers 4.47) by the token-classification pipeline's rules, written again in this file
// (reference_entities) and independent of onepass's own code: softmax per token, WordPiece
// sub-words ("##"), first/average/max word aggregation, B-/I- grouping, the WordPiece decoder's
// text, ignore_labels. Token offsets come from finding each golden token in the text; cases where
// that is not possible ([UNK], normalised text) are left out, and the test names how many remain.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>

#include "code_points.h"
#include "serve_suite.h"
#include "tests/support/golden_file.h"
#include "tests/support/http_client.h"
#include "tests/support/paths.h"
#include "tests/support/serve_process.h"

namespace onepass::testing {
namespace {

using nlohmann::json;

json ner_fixture_golden() { return read_golden("bert-tiny-ner"); }

struct RefToken {
  std::string token;
  std::size_t index = 0;  // in the sequence, [CLS] counted
  std::size_t start = 0, end = 0;
  std::vector<double> scores;
  bool subword = false;
};

struct RefEntity {
  std::string label;
  double score = 0;
  std::optional<std::size_t> index;
  std::string word;
  std::size_t start = 0, end = 0;
};

// The case's non-special tokens with code-point offsets and softmax scores; nullopt when a token
// is not a verbatim piece of the text (then the offsets cannot be worked out here). `whole`:
// the tokens must cover the text to its end (false for a truncated case).
std::optional<std::vector<RefToken>> reference_tokens(const json& c, bool whole) {
  const std::u32string text = code_points(c["text"].get<std::string>());
  const auto& tokens = c["tokens"];
  std::vector<RefToken> out;
  std::size_t pos = 0;
  for (std::size_t t = 1; t + 1 < tokens.size(); ++t) {
    RefToken r;
    r.token = tokens[t].get<std::string>();
    r.index = t;
    if (r.token == "[UNK]") return std::nullopt;
    r.subword = r.token.rfind("##", 0) == 0;
    const std::u32string piece = code_points(r.subword ? r.token.substr(2) : r.token);
    const auto at = text.find(piece, pos);
    if (at == std::u32string::npos) return std::nullopt;
    for (std::size_t k = pos; k < at; ++k)
      if (text[k] != U' ') return std::nullopt;
    if (r.subword && at != pos) return std::nullopt;
    r.start = at;
    r.end = at + piece.size();
    pos = r.end;
    const auto& logits = c["logits"][t];
    double top = -1e30;
    for (const auto& l : logits) top = std::max(top, l.get<double>());
    double sum = 0;
    for (const auto& l : logits) sum += std::exp(l.get<double>() - top);
    for (const auto& l : logits) r.scores.push_back(std::exp(l.get<double>() - top) / sum);
    out.push_back(std::move(r));
  }
  if (whole)
    for (std::size_t k = pos; k < text.size(); ++k)
      if (text[k] != U' ') return std::nullopt;
  return out;
}

std::size_t argmax(const std::vector<double>& v) {
  return static_cast<std::size_t>(std::max_element(v.begin(), v.end()) - v.begin());
}

std::string replace_all(std::string s, const std::string& from, const std::string& to) {
  for (std::size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size()))
    s.replace(at, from.size(), to);
  return s;
}

// tokenizers' WordPiece decoder (prefix "##", cleanup on): convert_tokens_to_string.
std::string wordpiece_text(const std::vector<std::string>& tokens) {
  std::string out;
  for (std::size_t i = 0; i < tokens.size(); ++i) {
    std::string t = tokens[i];
    if (i != 0) t = t.rfind("##", 0) == 0 ? t.substr(2) : " " + t;
    for (const auto& [from, to] :
         std::vector<std::pair<std::string, std::string>>{{" .", "."},
                                                          {" ?", "?"},
                                                          {" !", "!"},
                                                          {" ,", ","},
                                                          {" ' ", "'"},
                                                          {" n't", "n't"},
                                                          {" 'm", "'m"},
                                                          {" do not", " don't"},
                                                          {" 's", "'s"},
                                                          {" 've", "'ve"},
                                                          {" 're", "'re"}})
      t = replace_all(t, from, to);
    out += t;
  }
  return out;
}

std::pair<char, std::string> tag_of(const std::string& label) {
  if (label.rfind("B-", 0) == 0) return {'B', label.substr(2)};
  if (label.rfind("I-", 0) == 0) return {'I', label.substr(2)};
  return {'I', label};
}

// TokenClassificationPipeline.aggregate + group_entities + the ignore_labels filter.
std::vector<RefEntity> reference_entities(const std::vector<RefToken>& tokens,
                                          const std::vector<std::string>& id2label,
                                          const std::string& strategy,
                                          const std::vector<std::string>& ignore = {"O"}) {
  const auto ignored = [&](const std::string& label) {
    return std::find(ignore.begin(), ignore.end(), label) != ignore.end();
  };
  std::vector<RefEntity> entities;
  if (strategy == "none" || strategy == "simple") {
    for (const auto& t : tokens) {
      const auto id = argmax(t.scores);
      entities.push_back({id2label[id], t.scores[id], t.index, t.token, t.start, t.end});
    }
  } else {
    std::vector<std::vector<const RefToken*>> words;
    for (const auto& t : tokens) {
      if (words.empty() || !t.subword) words.emplace_back();
      words.back().push_back(&t);
    }
    for (const auto& word : words) {
      std::vector<double> scores;
      if (strategy == "first") {
        scores = word.front()->scores;
      } else if (strategy == "max") {
        const RefToken* best = word.front();
        for (const RefToken* t : word)
          if (*std::max_element(t->scores.begin(), t->scores.end()) >
              *std::max_element(best->scores.begin(), best->scores.end()))
            best = t;
        scores = best->scores;
      } else {
        scores.assign(word.front()->scores.size(), 0.0);
        for (const RefToken* t : word)
          for (std::size_t k = 0; k < scores.size(); ++k) scores[k] += t->scores[k] / word.size();
      }
      std::vector<std::string> pieces;
      for (const RefToken* t : word) pieces.push_back(t->token);
      const auto id = argmax(scores);
      entities.push_back({id2label[id], scores[id], std::nullopt, wordpiece_text(pieces),
                          word.front()->start, word.back()->end});
    }
  }
  std::vector<RefEntity> out;
  if (strategy == "none") {
    for (auto& e : entities)
      if (!ignored(e.label)) out.push_back(std::move(e));
    return out;
  }
  std::vector<std::vector<RefEntity>> groups;
  for (auto& e : entities) {
    if (!groups.empty()) {
      const auto [bi, tag] = tag_of(e.label);
      const auto [last_bi, last_tag] = tag_of(groups.back().back().label);
      if (tag == last_tag && bi != 'B') {
        groups.back().push_back(std::move(e));
        continue;
      }
    }
    groups.push_back({std::move(e)});
  }
  for (const auto& group : groups) {
    const std::string& first = group.front().label;
    const auto dash = first.find('-');
    RefEntity g;
    g.label = dash == std::string::npos ? first : first.substr(dash + 1);
    std::vector<std::string> words;
    for (const auto& e : group) {
      g.score += e.score / group.size();
      words.push_back(e.word);
    }
    g.word = wordpiece_text(words);
    g.start = group.front().start;
    g.end = group.back().end;
    if (!ignored(g.label)) out.push_back(std::move(g));
  }
  return out;
}

void expect_entities(const json& answer, const std::vector<RefEntity>& expected, double tolerance) {
  ASSERT_TRUE(answer.is_array()) << answer.dump();
  ASSERT_EQ(answer.size(), expected.size()) << answer.dump();
  for (std::size_t i = 0; i < expected.size(); ++i) {
    SCOPED_TRACE("entity " + std::to_string(i));
    const auto& a = answer[i];
    const auto& e = expected[i];
    EXPECT_EQ(a.value(e.index ? "entity" : "entity_group", ""), e.label) << a.dump();
    EXPECT_NEAR(a["score"].get<double>(), e.score, tolerance) << a.dump();
    if (e.index) {
      EXPECT_EQ(a["index"], *e.index) << a.dump();
    }
    EXPECT_EQ(a["word"], e.word) << a.dump();
    EXPECT_EQ(a["start"], e.start) << a.dump();
    EXPECT_EQ(a["end"], e.end) << a.dump();
  }
}

const std::vector<std::string> kStrategies{"none", "simple", "first", "average", "max"};

class ServeNer : public ServeSuite<ServeNer> {
 public:
  static std::vector<std::string> server_args() {
    return {"--model", "ner=" + fixture_model("bert-tiny-ner")};
  }

 protected:
  static void SetUpTestSuite() {
    ServeSuite::SetUpTestSuite();
    const json g = ner_fixture_golden();
    for (const auto& [id, label] : g["id2label"].items())
      id2label_.resize(std::max(id2label_.size(), std::stoul(id) + 1));
    for (const auto& [id, label] : g["id2label"].items()) id2label_[std::stoul(id)] = label;
    for (const auto& c : g["cases"]) {
      if (c.contains("pair") || c.contains("truncation") || !c.contains("text")) continue;
      if (c["text"].get<std::string>().empty()) continue;
      if (auto tokens = reference_tokens(c, true)) {
        cases_.push_back(c);
        tokens_.push_back(std::move(*tokens));
      }
    }
  }
  bool has_case(const std::string& id) const {
    return std::any_of(cases_.begin(), cases_.end(), [&](const json& c) { return c["id"] == id; });
  }

  static std::vector<std::string> id2label_;
  static std::vector<json> cases_;
  static std::vector<std::vector<RefToken>> tokens_;
};

std::vector<std::string> ServeNer::id2label_;
std::vector<json> ServeNer::cases_;
std::vector<std::vector<RefToken>> ServeNer::tokens_;

TEST_F(ServeNer, EveryStrategyOnEveryRouteMatchesTheGoldenLogits) {
  // English, German and French accents, Chinese, Japanese, Korean and Cyrillic among them.
  ASSERT_GE(cases_.size(), 12u);
  for (const char* id : {"short_en", "german", "french", "chinese", "japanese", "korean"})
    EXPECT_TRUE(has_case(id)) << id;
  json texts = json::array();
  for (const auto& c : cases_) texts.push_back(c["text"]);
  for (const auto& strategy : kStrategies) {
    SCOPED_TRACE(strategy);
    const json parameters = {{"aggregation_strategy", strategy}};
    const auto toolkit = post_json(port(), "/invocations",
                                   json{{"inputs", texts}, {"parameters", parameters}}.dump());
    const auto inference_api =
        post_json(port(), "/", json{{"inputs", texts}, {"parameters", parameters}}.dump());
    const auto tei = post_json(port(), "/predict_tokens",
                               json{{"inputs", texts}, {"aggregation_strategy", strategy}}.dump());
    for (const auto* r : {&toolkit, &inference_api, &tei}) {
      ASSERT_EQ(r->status, 200) << r->body;
      const auto answer = json::parse(r->body);
      ASSERT_EQ(answer.size(), cases_.size());
      for (std::size_t i = 0; i < cases_.size(); ++i) {
        SCOPED_TRACE(cases_[i]["id"].get<std::string>());
        expect_entities(answer[i], reference_entities(tokens_[i], id2label_, strategy), 1e-4);
      }
    }
  }
}

TEST_F(ServeNer, IgnoreLabelsAndParametersUnderTeiParameters) {
  for (std::size_t i = 0; i < cases_.size(); ++i) {
    const auto& c = cases_[i];
    SCOPED_TRACE(c["id"].get<std::string>());
    // Nothing ignored: every group, "O" ones included; parameters under "parameters".
    const auto all = post_json(
        port(), "/predict_tokens",
        json{{"inputs", c["text"]},
             {"parameters", {{"aggregation_strategy", "first"}, {"ignore_labels", json::array()}}}}
            .dump());
    ASSERT_EQ(all.status, 200) << all.body;
    expect_entities(json::parse(all.body), reference_entities(tokens_[i], id2label_, "first", {}),
                    1e-4);
    // Top-level fields win over "parameters".
    const auto loc = post_json(port(), "/predict_tokens",
                               json{{"inputs", c["text"]},
                                    {"parameters", {{"aggregation_strategy", "none"}}},
                                    {"aggregation_strategy", "average"},
                                    {"ignore_labels", {"O", "PER"}}}
                                   .dump());
    ASSERT_EQ(loc.status, 200) << loc.body;
    expect_entities(json::parse(loc.body),
                    reference_entities(tokens_[i], id2label_, "average", {"O", "PER"}), 1e-4);
  }
}

TEST_F(ServeNer, AloneEqualsBatched) {
  json texts = json::array();
  for (const auto& c : cases_) texts.push_back(c["text"]);
  for (const char* strategy : {"none", "average"}) {
    const auto batch =
        post_json(port(), "/predict_tokens",
                  json{{"inputs", texts}, {"aggregation_strategy", strategy}}.dump());
    ASSERT_EQ(batch.status, 200) << batch.body;
    const auto batched = json::parse(batch.body);
    for (std::size_t i = 0; i < cases_.size(); ++i) {
      SCOPED_TRACE(cases_[i]["id"].get<std::string>());
      const auto one =
          post_json(port(), "/predict_tokens",
                    json{{"inputs", cases_[i]["text"]}, {"aggregation_strategy", strategy}}.dump());
      ASSERT_EQ(one.status, 200) << one.body;
      const auto alone = json::parse(one.body);
      ASSERT_EQ(alone.size(), batched[i].size());
      for (std::size_t k = 0; k < alone.size(); ++k) {
        EXPECT_NEAR(alone[k]["score"].get<double>(), batched[i][k]["score"].get<double>(), 1e-5);
        auto a = alone[k], b = batched[i][k];
        a.erase("score");
        b.erase("score");
        EXPECT_EQ(a, b);
      }
    }
  }
}

TEST_F(ServeNer, KserveGivesGoldenTokenLogitsOffsetsAndEntities) {
  const std::size_t n = std::min<std::size_t>(cases_.size(), 3);
  json data = json::array();
  for (std::size_t i = 0; i < n; ++i) data.push_back(cases_[i]["text"]);
  const json body = {
      {"id", "ner-1"},
      {"inputs", {{{"name", "text"}, {"shape", {n}}, {"datatype", "BYTES"}, {"data", data}}}},
      {"parameters", {{"aggregation_strategy", "max"}}}};
  const auto r = post_json(port(), "/v2/models/ner/infer", body.dump());
  ASSERT_EQ(r.status, 200) << r.body;
  const auto answer = json::parse(r.body);
  EXPECT_EQ(answer["id"], "ner-1");
  std::size_t longest = 0;
  for (std::size_t i = 0; i < n; ++i)
    longest = std::max<std::size_t>(longest, cases_[i]["num_tokens"]);
  const std::size_t labels = id2label_.size();
  std::map<std::string, json> outputs;
  for (const auto& o : answer["outputs"]) outputs[o["name"]] = o;
  ASSERT_EQ(outputs.size(), 4u) << r.body;
  const auto& logits = outputs["logits"];
  EXPECT_EQ(logits["datatype"], "FP32");
  EXPECT_EQ(logits["shape"], json({n, longest, labels}));
  EXPECT_EQ(outputs["attention_mask"]["shape"], json({n, longest}));
  EXPECT_EQ(outputs["offset_mapping"]["shape"], json({n, longest, 2}));
  EXPECT_EQ(outputs["entities"]["shape"], json({n}));
  for (std::size_t i = 0; i < n; ++i) {
    SCOPED_TRACE(cases_[i]["id"].get<std::string>());
    const std::size_t real = cases_[i]["num_tokens"];
    for (std::size_t t = 0; t < longest; ++t) {
      EXPECT_EQ(outputs["attention_mask"]["data"][i * longest + t], t < real ? 1 : 0);
      for (std::size_t k = 0; k < labels; ++k) {
        const double got = logits["data"][(i * longest + t) * labels + k];
        const double want = t < real ? cases_[i]["logits"][t][k].get<double>() : 0.0;
        EXPECT_NEAR(got, want, 1e-4);
      }
    }
    for (const auto& tok : tokens_[i]) {
      EXPECT_EQ(outputs["offset_mapping"]["data"][(i * longest + tok.index) * 2], tok.start);
      EXPECT_EQ(outputs["offset_mapping"]["data"][(i * longest + tok.index) * 2 + 1], tok.end);
    }
    expect_entities(json::parse(outputs["entities"]["data"][i].get<std::string>()),
                    reference_entities(tokens_[i], id2label_, "max"), 1e-4);
  }
  // Only what was asked for.
  json only = body;
  only["outputs"] = {{{"name", "attention_mask"}}};
  const auto one = post_json(port(), "/v2/models/ner/infer", only.dump());
  ASSERT_EQ(one.status, 200) << one.body;
  EXPECT_EQ(json::parse(one.body)["outputs"].size(), 1u);
}

// `stride`: golden's trunc_64 case is the text cut to 64 tokens, which is exactly the first
// window of that text with max_length 64. Entities that end before the second window's first
// content token can come from the first window only, so they are the reference's entities of
// trunc_64 that end there; later windows must add entities past that point.
TEST_F(ServeNer, StrideWindowsKeepTheFirstWindowsGoldenEntities) {
  const json g = ner_fixture_golden();
  json trunc;
  for (const auto& c : g["cases"])
    if (c["id"] == "trunc_64") trunc = c;
  ASSERT_FALSE(trunc.is_null());
  const auto tokens = reference_tokens(trunc, false);
  ASSERT_TRUE(tokens.has_value());
  const std::size_t stride = 16;
  const std::size_t room = 64 - 2;
  // The second window's first content token: content index room - stride.
  const std::size_t boundary = (*tokens)[room - stride].start;
  for (const char* strategy : {"simple", "first", "average", "max"}) {
    SCOPED_TRACE(strategy);
    const json body = {
        {"inputs", trunc["text"]},
        {"parameters",
         {{"aggregation_strategy", strategy}, {"stride", stride}, {"max_length", 64}}}};
    const auto r = post_json(port(), "/invocations", body.dump());
    ASSERT_EQ(r.status, 200) << r.body;
    const auto answer = json::parse(r.body);
    json before = json::array();
    bool past = false;
    for (const auto& e : answer) {
      if (e["end"].get<std::size_t>() <= boundary) before.push_back(e);
      past = past || e["start"].get<std::size_t>() >= (*tokens).back().end;
    }
    std::vector<RefEntity> expected;
    for (auto& e : reference_entities(*tokens, id2label_, strategy))
      if (e.end <= boundary) expected.push_back(e);
    ASSERT_FALSE(expected.empty());
    expect_entities(before, expected, 1e-4);
    EXPECT_TRUE(past) << "no entity from the later windows: " << r.body;
    // Merged: sorted by start, none starting inside the one before it.
    for (std::size_t i = 1; i < answer.size(); ++i)
      EXPECT_GE(answer[i]["start"].get<std::size_t>(), answer[i - 1]["end"].get<std::size_t>());
  }
  // A text within the limit is one window: stride changes nothing.
  const auto& c = cases_.front();
  const auto plain = post_json(port(), "/predict_tokens",
                               json{{"inputs", c["text"]}, {"aggregation_strategy", "max"}}.dump());
  const auto strided =
      post_json(port(), "/predict_tokens",
                json{{"inputs", c["text"]}, {"aggregation_strategy", "max"}, {"stride", 8}}.dump());
  ASSERT_EQ(plain.status, 200) << plain.body;
  EXPECT_EQ(plain.body, strided.body);
}

TEST_F(ServeNer, RoutesAreLabelledInTheMetrics) {
  const auto r = post_json(port(), "/predict_tokens", json{{"inputs", "a b"}}.dump());
  ASSERT_EQ(r.status, 200) << r.body;
  const auto metrics = get(port(), "/metrics");
  EXPECT_NE(metrics.body.find(R"(route="/predict_tokens",model="ner",status="200")"),
            std::string::npos);
  EXPECT_NE(metrics.body.find(R"(route="/v2/models/{model}/infer",model="ner",status="200")"),
            std::string::npos);
  EXPECT_NE(metrics.body.find(R"(route="/invocations",model="ner",status="200")"),
            std::string::npos);
}

}  // namespace
}  // namespace onepass::testing
