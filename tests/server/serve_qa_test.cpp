// End to end: the real `onepass serve` binary with the question-answering fixtures, over
// HTTP (/invocations, POST /). Expected answers are worked here from each fixture's golden.json
// (every window's start and end logits and tokens from transformers 4.40) by the question-
// answering pipeline's rules, written again in this file (reference_answers) and independent of
// onepass's own code: -10000 on the tokens that cannot hold the answer (all but the context and
// the first token), softmax of the starts and of the ends, the first token's pair zeroed, spans
// s <= e < s + max_answer_len scored p_start * p_end, top_k per window, the windows' answers
// merged by score, the no-answer score, and spans widened to whole words. Token offsets come
// from finding each golden token in the context (WordPiece "##" pieces join their word;
// SentencePiece "▁" starts a word and covers the space before it, as the tokenizers library's
// Metaspace does); a case where that is not possible is compared on its scores only, and the
// test names how many are compared whole.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>

#include "code_points.h"
#include "serve_suite.h"
#include "tests/support/fixture_catalogue.h"
#include "tests/support/golden_file.h"
#include "tests/support/http_client.h"
#include "tests/support/paths.h"
#include "tests/support/serve_process.h"

namespace onepass::testing {
namespace {

using nlohmann::json;

// The question-answering fixtures of the families transformers itself models (the remote-code
// ones, NomicBERT's and GTE's, are held to their goldens by model_test and run_cli_test).
const std::vector<std::string> kModels = fixtures_where([](const Fixture& f) {
  return f.task == FixtureTask::kQuestionAnswering && !f.has(kRemoteCode);
});

std::string utf8(const std::u32string& s) {
  std::string out;
  for (char32_t c : s) {
    if (c < 0x80) {
      out += static_cast<char>(c);
    } else if (c < 0x800) {
      out += static_cast<char>(0xC0 | (c >> 6));
      out += static_cast<char>(0x80 | (c & 0x3F));
    } else if (c < 0x10000) {
      out += static_cast<char>(0xE0 | (c >> 12));
      out += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (c & 0x3F));
    } else {
      out += static_cast<char>(0xF0 | (c >> 18));
      out += static_cast<char>(0x80 | ((c >> 12) & 0x3F));
      out += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (c & 0x3F));
    }
  }
  return out;
}

const std::string kMeta = "\xE2\x96\x81";  // "▁"

struct RefToken {
  std::size_t start = 0, end = 0;
  int word = 0;
};

enum class Family { kWordPiece, kSentencePiece, kByteLevel };

Family family_of(const std::string& model) {
  if (model.rfind("xlmr", 0) == 0 || model.rfind("deberta", 0) == 0) return Family::kSentencePiece;
  if (model.rfind("roberta", 0) == 0) return Family::kByteLevel;
  return Family::kWordPiece;
}

// Letters, digits and the rest: where the byte-level pre-tokenizer's regex cuts ASCII text.
int char_class(char32_t c) {
  if ((c >= U'a' && c <= U'z') || (c >= U'A' && c <= U'Z')) return 0;
  return c >= U'0' && c <= U'9' ? 1 : 2;
}

// The context's own tokens (all windows' context runs, in order, without repeats) with their
// code point offsets and words; nullopt when a token cannot be placed in the context.
// WordPiece: a piece without "##" starts a word (punctuation is a word of its own), spaces
// before it skipped. SentencePiece: a "▁" piece starts a word and covers the space it stands
// for; a piece without it continues the word right where the last one ended. Byte-level BPE
// (ASCII contexts only): "Ġ" is a space, left out of the offsets (trim_offsets); a word starts
// at a space or where letters, digits and other characters meet (the regex's pieces).
std::optional<std::vector<RefToken>> context_tokens(const std::u32string& context,
                                                    const std::vector<std::string>& tokens,
                                                    Family family) {
  const bool sentencepiece = family == Family::kSentencePiece;
  if (family == Family::kByteLevel) {
    for (char32_t c : context)
      if (c >= 0x80) return std::nullopt;
  }
  std::vector<RefToken> out;
  std::size_t pos = 0;
  int word = -1;
  for (const std::string& token : tokens) {
    if (token == "[UNK]" || token == "<unk>") return std::nullopt;
    if (family == Family::kByteLevel) {
      const std::string space = "\xC4\xA0";  // "Ġ"
      const bool spaced = token.rfind(space, 0) == 0;
      const std::u32string piece = code_points(spaced ? token.substr(space.size()) : token);
      for (char32_t c : piece)
        if (c >= 0x80) return std::nullopt;
      const std::size_t at = pos + (spaced ? 1 : 0);
      if (piece.empty() || (spaced && (pos >= context.size() || context[pos] != U' ')) ||
          context.compare(at, piece.size(), piece) != 0)
        return std::nullopt;
      if (spaced || word < 0 || char_class(piece.front()) != char_class(context[pos - 1])) ++word;
      out.push_back({at, at + piece.size(), word});
      pos = at + piece.size();
      continue;
    }
    const bool meta = sentencepiece && token.rfind(kMeta, 0) == 0;
    const bool hashes = !sentencepiece && token.rfind("##", 0) == 0;
    const std::u32string piece = code_points(meta     ? token.substr(kMeta.size())
                                             : hashes ? token.substr(2)
                                                      : token);
    std::size_t begin = pos, at = pos;
    if (meta) {
      if (at < context.size() && context[at] == U' ') {
        ++at;
      } else if (piece.empty() || pos > 0) {
        return std::nullopt;  // a "▁" that stands for no space
      }
    } else if (!sentencepiece && !hashes) {
      while (at < context.size() && context[at] == U' ') ++at;
      begin = at;
    }
    if (context.compare(at, piece.size(), piece) != 0) return std::nullopt;
    const bool continues = hashes || (sentencepiece && !meta);
    if (continues && word < 0) return std::nullopt;
    if (!continues) ++word;
    out.push_back({begin, at + piece.size(), word});
    pos = at + piece.size();
  }
  return out;
}

struct RefAnswer {
  double score = 0;
  std::size_t start = 0, end = 0;
  std::string answer;
};

struct Window {
  std::vector<std::array<double, 2>> logits;
  std::vector<std::int32_t> ids;
  std::size_t context_begin = 0;  // window position of its first context token
  std::size_t context_first = 0;  // which context token that is
  std::size_t context_count = 0;
};

struct Options {
  std::size_t top_k = 1;
  std::size_t max_answer_len = 15;
  bool handle_impossible_answer = false;
  bool align_to_words = true;
};

// The pipeline's answers for one case (see the file comment). `tokens` null: scores only.
std::vector<RefAnswer> reference_answers(const std::vector<Window>& windows,
                                         const std::u32string& context,
                                         const std::vector<RefToken>* tokens, const Options& o) {
  std::vector<RefAnswer> answers;
  double null_score = 1e6;
  for (const Window& w : windows) {
    const std::size_t n = w.logits.size();
    std::vector<bool> allowed(n, false);
    for (std::size_t t = 0; t < n; ++t)
      allowed[t] =
          (t >= w.context_begin && t < w.context_begin + w.context_count) || w.ids[t] == w.ids[0];
    std::array<std::vector<double>, 2> p;
    for (int k = 0; k < 2; ++k) {
      double top = -1e30;
      for (std::size_t t = 0; t < n; ++t) top = std::max(top, allowed[t] ? w.logits[t][k] : -1e4);
      double sum = 0;
      for (std::size_t t = 0; t < n; ++t)
        sum += std::exp((allowed[t] ? w.logits[t][k] : -1e4) - top);
      for (std::size_t t = 0; t < n; ++t)
        p[k].push_back(std::exp((allowed[t] ? w.logits[t][k] : -1e4) - top) / sum);
    }
    null_score = std::min(null_score, p[0][0] * p[1][0]);
    p[0][0] = p[1][0] = 0;
    struct Span {
      double score;
      std::size_t s, e;
    };
    std::vector<Span> spans;
    for (std::size_t s = 0; s < n; ++s)
      for (std::size_t e = s; e < std::min(n, s + o.max_answer_len); ++e)
        spans.push_back({p[0][s] * p[1][e], s, e});
    std::stable_sort(spans.begin(), spans.end(),
                     [](const Span& a, const Span& b) { return a.score > b.score; });
    spans.resize(std::min(spans.size(), o.top_k));
    for (const Span& span : spans) {
      if (!(span.s == 0 || allowed[span.s]) || !(span.e == 0 || allowed[span.e])) continue;
      RefAnswer a;
      a.score = span.score;
      if (tokens != nullptr && span.s >= w.context_begin && span.e >= w.context_begin) {
        // Context token k of the window is the context's token context_first + k.
        const std::size_t first = w.context_first + (span.s - w.context_begin);
        const std::size_t last = w.context_first + (span.e - w.context_begin);
        std::size_t begin = first, end = last;
        if (o.align_to_words) {
          const std::size_t lo = w.context_first, hi = w.context_first + w.context_count;
          while (begin > lo && (*tokens)[begin - 1].word == (*tokens)[first].word) --begin;
          while (end + 1 < hi && (*tokens)[end + 1].word == (*tokens)[last].word) ++end;
        }
        a.start = (*tokens)[begin].start;
        a.end = (*tokens)[end].end;
        a.answer = a.end > a.start ? utf8(context.substr(a.start, a.end - a.start)) : "";
      }
      answers.push_back(a);
    }
  }
  if (o.handle_impossible_answer) answers.push_back({null_score, 0, 0, ""});
  std::stable_sort(answers.begin(), answers.end(),
                   [](const RefAnswer& a, const RefAnswer& b) { return a.score > b.score; });
  answers.resize(std::min(answers.size(), o.top_k));
  return answers;
}

// One golden (question, context) with its windows.
struct Case {
  std::string id;
  std::string question, context;
  std::size_t max_seq_len = 0, doc_stride = 0;
  std::vector<Window> windows;
  std::optional<std::vector<RefToken>> tokens;  // the context's, when they could be placed
};

std::vector<Case> cases_of(const std::string& model) {
  std::vector<Case> out;
  std::vector<std::string> context_tokens_seen;
  const json doc = read_golden(model);
  for (const auto& c : doc["cases"]) {
    const int w = c["window"].get<int>();
    if (w == 0) {
      out.emplace_back();
      Case& k = out.back();
      k.id = c["id"].get<std::string>().substr(0, c["id"].get<std::string>().find('#'));
      k.question = c["question"];
      k.context = c["context"];
      k.max_seq_len = c["max_seq_len"];
      k.doc_stride = c["doc_stride"];
      context_tokens_seen.clear();
    }
    Case& k = out.back();
    Window win;
    for (const auto& l : c["logits"])
      win.logits.push_back({l[0].get<double>(), l[1].get<double>()});
    win.ids = c["input_ids"].get<std::vector<std::int32_t>>();
    const auto span = c["context_tokens"];
    win.context_first = span[0];
    win.context_count = span[1].get<std::size_t>() - win.context_first;
    // The run ends before the one trailing special token ([SEP], </s>).
    win.context_begin = win.ids.size() - 1 - win.context_count;
    const auto tokens = c["tokens"].get<std::vector<std::string>>();
    for (std::size_t i = 0; i < win.context_count; ++i) {
      const std::size_t index = win.context_first + i;
      if (index == context_tokens_seen.size())
        context_tokens_seen.push_back(tokens[win.context_begin + i]);
    }
    k.windows.push_back(std::move(win));
    if (w + 1 == c["windows"].get<int>())
      k.tokens = context_tokens(code_points(k.context), context_tokens_seen, family_of(model));
  }
  return out;
}

class ServeQa : public ServeSuite<ServeQa> {
 public:
  static std::vector<std::string> server_args() {
    std::vector<std::string> args;
    for (const auto& m : kModels) {
      args.push_back("--model");
      args.push_back(m + "=" + fixture_model(m));
    }
    return args;
  }
};

json as_list(const json& answer) { return answer.is_array() ? answer : json::array({answer}); }

void expect_answers(const json& got, const std::vector<RefAnswer>& want, bool whole,
                    const std::string& where) {
  SCOPED_TRACE(where);
  const json list = as_list(got);
  ASSERT_EQ(list.size(), want.size()) << got.dump();
  EXPECT_EQ(got.is_array(), want.size() != 1) << "one answer is an object, else a list";
  for (std::size_t i = 0; i < want.size(); ++i) {
    const json& a = list[i];
    ASSERT_TRUE(a.is_object()) << a.dump();
    EXPECT_NEAR(a.at("score").get<double>(), want[i].score, 1e-4 * want[i].score + 1e-9)
        << a.dump();
    if (!whole) continue;
    EXPECT_EQ(a.at("start").get<std::size_t>(), want[i].start) << a.dump();
    EXPECT_EQ(a.at("end").get<std::size_t>(), want[i].end) << a.dump();
    EXPECT_EQ(a.at("answer").get<std::string>(), want[i].answer) << a.dump();
  }
}

json ask(std::uint16_t port, const std::string& model, const std::string& route, const json& inputs,
         const json& parameters, int* status = nullptr) {
  const auto r = post_json(port, route, json{{"inputs", inputs}, {"parameters", parameters}}.dump(),
                           target(model));
  if (status != nullptr) *status = r.status;
  EXPECT_EQ(r.status, 200) << model << " " << r.body;
  return r.status == 200 ? json::parse(r.body) : json();
}

TEST_F(ServeQa, EveryCaseOfEveryModelGetsThePipelinesAnswer) {
  std::size_t whole = 0, total = 0;
  for (const auto& model : kModels) {
    for (const Case& c : cases_of(model)) {
      SCOPED_TRACE(model + " " + c.id);
      const json inputs = {{"question", c.question}, {"context", c.context}};
      const json window_params = {{"max_seq_len", c.max_seq_len}, {"doc_stride", c.doc_stride}};
      const std::u32string context = code_points(c.context);
      const auto* tokens = c.tokens ? &*c.tokens : nullptr;
      ++total;
      whole += tokens != nullptr;
      // The defaults, top_k 3, align_to_words off, the no-answer score, a short max_answer_len.
      const std::vector<std::pair<json, Options>> variants{
          {json::object(), {}},
          {{{"top_k", 3}}, {3, 15, false, true}},
          {{{"topk", 2}, {"align_to_words", false}}, {2, 15, false, false}},
          {{{"handle_impossible_answer", true}, {"top_k", 2}}, {2, 15, true, true}},
          {{{"max_answer_len", 2}}, {1, 2, false, true}},
      };
      for (const auto& [extra, options] : variants) {
        json params = window_params;
        params.update(extra);
        const auto want = reference_answers(c.windows, context, tokens, options);
        const json got = ask(port(), model, "/invocations", inputs, params);
        expect_answers(got, want, tokens != nullptr, params.dump());
      }
    }
  }
  std::printf("[qa] %zu of %zu cases compared whole (the rest on scores)\n", whole, total);
  EXPECT_GE(whole * 2, total);
}

TEST_F(ServeQa, ListsAnswerInOrderOnBothToolkitRoutes) {
  const auto cases = cases_of("bert-tiny-qa");
  json inputs = json::array();
  std::vector<std::vector<RefAnswer>> want;
  for (const Case& c : cases) {
    if (c.max_seq_len != 384 || !c.tokens) continue;
    inputs.push_back({{"question", c.question}, {"context", c.context}});
    want.push_back(reference_answers(c.windows, code_points(c.context), &*c.tokens, {}));
  }
  ASSERT_GE(want.size(), 4u);
  for (const char* route : {"/invocations", "/"}) {
    const json got = ask(port(), "bert-tiny-qa", route, inputs, json::object());
    ASSERT_TRUE(got.is_array());
    ASSERT_EQ(got.size(), want.size());
    for (std::size_t i = 0; i < want.size(); ++i) expect_answers(got[i], want[i], true, route);
    // A list of one is answered as its one input (the pipeline unwraps it).
    const json one = ask(port(), "bert-tiny-qa", route, json::array({inputs[0]}), json::object());
    EXPECT_TRUE(one.is_object()) << one.dump();
    expect_answers(one, want[0], true, route);
  }
}

TEST_F(ServeQa, BadRequestsGetAClearError) {
  const json good = {{"question", "Who?"}, {"context", "She finished the report."}};
  const std::vector<std::tuple<json, json, std::string>> bad{
      {{{"question", "Who?"}}, json::object(), "context"},
      {{{"question", ""}, {"context", "x"}}, json::object(), "question"},
      {{{"question", 3}, {"context", "x"}}, json::object(), "question"},
      {"just a string", json::object(), "question"},
      {json::array(), json::object(), "inputs"},
      {good, {{"top_k", 0}}, "top_k"},
      {good, {{"max_answer_len", 0}}, "max_answer_len"},
      {good, {{"max_seq_len", 100000}}, "max_seq_len"},
      {good, {{"max_seq_len", 16}, {"doc_stride", 20}}, "doc_stride"},
      {good, {{"doc_stride", 400}}, "doc_stride"},  // above the default max_seq_len, 384
      {good, {{"handle_impossible_answer", "yes"}}, "handle_impossible_answer"},
      {{{"question", "Who?"}, {"context", "   "}}, json::object(), "context"},
  };
  for (const auto& [inputs, params, word] : bad) {
    const auto r =
        post_json(port(), "/invocations", json{{"inputs", inputs}, {"parameters", params}}.dump(),
                  target("bert-tiny-qa"));
    EXPECT_GE(r.status, 400) << inputs.dump() << params.dump();
    EXPECT_LT(r.status, 500) << r.body;
    EXPECT_NE(r.body.find(word), std::string::npos) << r.body;
    EXPECT_TRUE(json::accept(r.body)) << r.body;
  }
  // A long question leaves the context no room; a stride as large as the room never advances.
  std::string question;
  for (int i = 0; i < 40; ++i) question += "Where does the train leave from? ";
  const auto cases = cases_of("bert-tiny-qa");
  ASSERT_FALSE(cases.empty());
  const std::string& long_context = cases.back().context;
  for (const auto& [q, params] : std::vector<std::pair<std::string, json>>{
           {question, {{"max_seq_len", 64}}},
           {"Who came?", {{"max_seq_len", 24}, {"doc_stride", 20}}}}) {
    const auto r = post_json(
        port(), "/invocations",
        json{{"inputs", {{"question", q}, {"context", long_context}}}, {"parameters", params}}
            .dump(),
        target("bert-tiny-qa"));
    EXPECT_EQ(r.status, 400) << r.body;
  }
  // Windows count against --max-client-batch-size (32): the long context (255 tokens) in
  // windows of 16 context tokens sharing 4 is 21 windows; 11 contexts that fit, one window each,
  // make 32, a 12th is one too many.
  const json windows = {{"max_seq_len", 24}, {"doc_stride", 4}};
  json many = json::array({{{"question", "Who came?"}, {"context", long_context}}});
  for (int i = 0; i < 11; ++i) many.push_back(good);
  const auto fits =
      post_json(port(), "/invocations", json{{"inputs", many}, {"parameters", windows}}.dump(),
                target("bert-tiny-qa"));
  EXPECT_EQ(fits.status, 200) << fits.body;
  many.push_back(good);
  const auto over =
      post_json(port(), "/invocations", json{{"inputs", many}, {"parameters", windows}}.dump(),
                target("bert-tiny-qa"));
  EXPECT_EQ(over.status, 422) << over.body;
  EXPECT_NE(over.body.find("33 windows"), std::string::npos) << over.body;
  // The server still answers after all of them.
  int status = 0;
  ask(port(), "bert-tiny-qa", "/invocations", good, json::object(), &status);
  EXPECT_EQ(status, 200);
}

// KServe v2: the raw start and end logits of every golden window, sent as one padded batch of
// ids, and of a one-window case sent as text (question) and text_pair (context).
TEST_F(ServeQa, KServeGivesEveryWindowsStartAndEndLogits) {
  for (const auto& model : kModels) {
    SCOPED_TRACE(model);
    const json doc = read_golden(model);
    const auto& cases = doc["cases"];
    std::size_t longest = 0;
    for (const auto& c : cases) longest = std::max(longest, c["input_ids"].size());
    json ids = json::array(), mask = json::array(), types = json::array();
    for (const auto& c : cases) {
      const std::size_t n = c["input_ids"].size();
      for (std::size_t t = 0; t < longest; ++t) {
        ids.push_back(t < n ? c["input_ids"][t].get<int>() : 0);
        mask.push_back(t < n ? 1 : 0);
        types.push_back(t < n && c.contains("token_type_ids") ? c["token_type_ids"][t].get<int>()
                                                              : 0);
      }
    }
    const json shape = {cases.size(), longest};
    json inputs = json::array(
        {{{"name", "input_ids"}, {"shape", shape}, {"datatype", "INT64"}, {"data", ids}},
         {{"name", "attention_mask"}, {"shape", shape}, {"datatype", "INT64"}, {"data", mask}}});
    if (cases[0].contains("token_type_ids"))
      inputs.push_back(
          {{"name", "token_type_ids"}, {"shape", shape}, {"datatype", "INT64"}, {"data", types}});
    const auto r =
        post_json(port(), "/v2/models/" + model + "/infer", json{{"inputs", inputs}}.dump());
    ASSERT_EQ(r.status, 200) << r.body;
    const json outputs = json::parse(r.body)["outputs"];
    ASSERT_EQ(outputs.size(), 3u) << r.body;
    EXPECT_EQ(outputs[0]["name"], "start_logits");
    EXPECT_EQ(outputs[1]["name"], "end_logits");
    EXPECT_EQ(outputs[2]["name"], "attention_mask");
    EXPECT_EQ(outputs[0]["shape"], shape);
    double worst = 0;
    for (std::size_t i = 0; i < cases.size(); ++i) {
      const auto& logits = cases[i]["logits"];
      for (std::size_t t = 0; t < longest; ++t) {
        const bool real = t < logits.size();
        for (int k = 0; k < 2; ++k) {
          const double got = outputs[k]["data"][i * longest + t].get<double>();
          worst = std::max(worst, std::abs(got - (real ? logits[t][k].get<double>() : 0.0)));
        }
        EXPECT_EQ(outputs[2]["data"][i * longest + t].get<int>(), real ? 1 : 0);
      }
    }
    EXPECT_LE(worst, 1e-4);
    // A case that fits in one window, as text: the question and the context as a pair.
    const json& one = cases[0];
    ASSERT_EQ(one["windows"], 1);
    const json text_inputs = json::array(
        {{{"name", "text"}, {"shape", {1}}, {"datatype", "BYTES"}, {"data", {one["question"]}}},
         {{"name", "text_pair"},
          {"shape", {1}},
          {"datatype", "BYTES"},
          {"data", {one["context"]}}}});
    const auto t =
        post_json(port(), "/v2/models/" + model + "/infer",
                  json{{"inputs", text_inputs}, {"outputs", {{{"name", "end_logits"}}}}}.dump());
    ASSERT_EQ(t.status, 200) << t.body;
    const json end = json::parse(t.body)["outputs"];
    ASSERT_EQ(end.size(), 1u);
    ASSERT_EQ(end[0]["data"].size(), one["logits"].size());
    for (std::size_t k = 0; k < one["logits"].size(); ++k)
      EXPECT_NEAR(end[0]["data"][k].get<double>(), one["logits"][k][1].get<double>(), 1e-4);
  }
  const auto metadata = get(port(), "/v2/models/bert-tiny-qa");
  ASSERT_EQ(metadata.status, 200);
  EXPECT_NE(metadata.body.find("start_logits"), std::string::npos) << metadata.body;
  const auto unknown = post_json(
      port(), "/v2/models/bert-tiny-qa/infer",
      R"({"inputs":[{"name":"text","shape":[1],"datatype":"BYTES","data":["a"]}],"outputs":[{"name":"logits"}]})");
  EXPECT_EQ(unknown.status, 400) << unknown.body;
  EXPECT_NE(unknown.body.find("start_logits"), std::string::npos) << unknown.body;
}

TEST_F(ServeQa, OtherRoutesRefuseAQuestionAnsweringModel) {
  for (const auto& [route, body] : std::vector<std::pair<std::string, json>>{
           {"/predict", {{"inputs", "a text"}}},
           {"/embed", {{"inputs", "a text"}}},
           {"/predict_tokens", {{"inputs", "a text"}}},
           {"/classify", {{"model", "bert-tiny-qa"}, {"input", "a text"}}},
           {"/rerank", {{"query", "q"}, {"texts", {"a text"}}}}}) {
    const auto r = post_json(port(), route, body.dump(), target("bert-tiny-qa"));
    EXPECT_GE(r.status, 400) << route << " " << r.body;
    EXPECT_LT(r.status, 500) << route << " " << r.body;
  }
  // The sequence-classification routes say where a question goes.
  for (const char* route : {"/predict", "/classify"}) {
    const auto r = post_json(
        port(), route, json{{"model", "bert-tiny-qa"}, {"inputs", "a"}, {"input", "a"}}.dump(),
        target("bert-tiny-qa"));
    EXPECT_NE(r.body.find("/invocations"), std::string::npos) << route << " " << r.body;
  }
}

}  // namespace
}  // namespace onepass::testing
