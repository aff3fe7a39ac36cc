// GLiNER through the runtime on the real engine and tokenizer: every case of the GLiNER
// fixtures' goldens (tools/fixtures/gliner.py: GLiNER's own predict_entities) submitted at once,
// so that the batcher mixes texts and label sets; each answer has GLiNER's spans, labels and
// order exactly and its scores within 1e-4. Then the request checks a dialect relies on.
#include "runtime/extract.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "call.h"
#include "runtime/field_error.h"
#include "tests/support/fixture_catalogue.h"
#include "tests/support/golden_file.h"

namespace onepass::runtime {
namespace {

using namespace testing;
using namespace std::chrono_literals;
using nlohmann::json;

const std::vector<std::string> kExtractors =
    onepass::testing::fixtures_with_task({onepass::testing::FixtureTask::kExtractor});

InferenceRequest extract_request(const std::string& model, const json& c) {
  InferenceRequest request;
  request.model = model;
  request.output = OutputKind::kSpans;
  InferenceItem item;
  item.text = c["text"].get<std::string>();
  request.items.push_back(item);
  request.extract.labels = c["labels"].get<std::vector<std::string>>();
  request.extract.threshold = c["threshold"].get<float>();
  request.extract.flat_ner = c["flat_ner"].get<bool>();
  request.extract.multi_label = c["multi_label"].get<bool>();
  return request;
}

class Extract : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    RuntimeOptions o;
    for (const auto& m : kExtractors) o.models.push_back({m, fixture_model(m)});
    o.threads = 1;
    runtime_ = new Runtime(o);
    ASSERT_TRUE(runtime_->wait_ready(60s));
  }
  static void TearDownTestSuite() {
    delete runtime_;
    runtime_ = nullptr;
  }
  static Runtime* runtime_;
};
Runtime* Extract::runtime_ = nullptr;

TEST_F(Extract, EntitiesMatchGlinerThroughBatches) {
  ASSERT_EQ(kExtractors.size(), 2u);
  for (const std::string& model : kExtractors) {
    SCOPED_TRACE(model);
    const auto description = runtime_->find_model(model);
    ASSERT_TRUE(description);
    ASSERT_EQ(description->state, ModelState::kReady) << description->load_error;
    EXPECT_EQ(description->task, ModelTask::kSpanExtractor);
    const json g = onepass::testing::read_golden(model);
    const int max_width = g["max_width"].get<int>();
    EXPECT_EQ(description->info.span.max_width, max_width);
    std::vector<Pending> pending;
    for (const auto& c : g["cases"])
      pending.push_back(submit(*runtime_, extract_request(model, c)));
    std::size_t compared = 0;
    for (std::size_t i = 0; i < pending.size(); ++i) {
      const json& c = g["cases"][i];
      SCOPED_TRACE(c["id"].get<std::string>());
      const InferenceResult result = pending[i].get();
      ASSERT_FALSE(result.error);
      ASSERT_EQ(result.items.size(), 1u);
      const InferenceRequest request = extract_request(model, c);
      const auto entities =
          decode_entities(request.items[0].text, result.items[0], request.extract, max_width);
      const json& expected = c["entities"];
      ASSERT_EQ(entities.size(), expected.size());
      for (std::size_t e = 0; e < entities.size(); ++e) {
        EXPECT_EQ(entities[e].start, expected[e]["start"].get<std::uint32_t>());
        EXPECT_EQ(entities[e].end, expected[e]["end"].get<std::uint32_t>());
        EXPECT_EQ(entities[e].text, expected[e]["text"].get<std::string>());
        EXPECT_EQ(entities[e].label, expected[e]["label"].get<std::string>());
        EXPECT_NEAR(entities[e].score, expected[e]["score"].get<double>(), 1e-4);
        ++compared;
      }
    }
    EXPECT_GT(compared, 100u);
  }
}

TEST(ExtractWords, SplitAsGlinersWhitespaceSplitter) {
  // \w+(?:[-_]\w+)*|\S: joined words stay whole, a joiner without a word after it is a word of
  // its own, combining marks (not \w in Python) split, CJK runs are one word.
  const std::string text = "Jean-Luc  a--b_c x- 東京都 e\u0301!";
  std::vector<std::string> words;
  for (const TextWord& w : split_words(text))
    words.push_back(text.substr(w.byte_begin, w.byte_end - w.byte_begin));
  EXPECT_EQ(words, (std::vector<std::string>{"Jean-Luc", "a", "-", "-", "b_c", "x", "-", "東京都",
                                             "e", "\u0301", "!"}));
  const auto cps = split_words("é x");
  ASSERT_EQ(cps.size(), 2u);
  EXPECT_EQ(cps[1].start, 2u);  // code points, not bytes
}

TEST(ExtractWindows, WindowsOfWordsSharingTheStride) {
  // Ten words (one of them two code points): windows of 4 words sharing 1 start at words 0, 3
  // and 6; the last reaches the end.
  const std::string text = "w0 w1 w2 w3 w4 w5 w6 é7 w8 w9.";
  auto texts = [&](const std::vector<ExtractWindow>& windows) {
    std::vector<std::string> out;
    for (const ExtractWindow& w : windows) {
      out.push_back(text.substr(w.byte_begin, w.byte_end - w.byte_begin));
      // Code points: "é" (byte 21) is two bytes.
      EXPECT_EQ(w.start, w.byte_begin - (w.byte_begin > 21 ? 1 : 0));
    }
    return out;
  };
  EXPECT_EQ(split_words(text).size(), 11u);  // the final "." is a word
  EXPECT_EQ(texts(extract_windows(text, 4, 1)),
            (std::vector<std::string>{"w0 w1 w2 w3", "w3 w4 w5 w6", "w6 é7 w8 w9", "w9."}));
  EXPECT_EQ(texts(extract_windows(text, 5, 0)),
            (std::vector<std::string>{"w0 w1 w2 w3 w4", "w5 w6 é7 w8 w9", "."}));
  EXPECT_EQ(texts(extract_windows(text, 11, 3)), (std::vector<std::string>{text}));
  EXPECT_EQ(texts(extract_windows(text, 6, 4)),
            (std::vector<std::string>{"w0 w1 w2 w3 w4 w5", "w2 w3 w4 w5 w6 é7", "w4 w5 w6 é7 w8 w9",
                                      "w6 é7 w8 w9."}));
  try {
    extract_windows(text, 4, 4);
    ADD_FAILURE() << "a stride of the whole window";
  } catch (const FieldError& e) {
    EXPECT_EQ(e.field(), "stride");
  }
}

TEST(ExtractOptions, BadLabelsAndThresholdsAreFieldErrors) {
  ModelDescription model;
  model.info.span.entity_token = "<<ENT>>";
  model.info.span.separator_token = "<<SEP>>";
  auto field_of = [&](ExtractOptions options) -> std::string {
    try {
      check_extract_options(options, model);
    } catch (const FieldError& e) {
      return e.field();
    }
    return "";
  };
  ExtractOptions ok;
  ok.labels = {"person"};
  EXPECT_EQ(field_of(ok), "");
  ExtractOptions none;
  EXPECT_EQ(field_of(none), "labels");
  ExtractOptions empty = ok;
  empty.labels.push_back("  ");
  EXPECT_EQ(field_of(empty), "labels");
  ExtractOptions many = ok;
  many.labels.assign(kMaxExtractLabels + 1, "x");
  EXPECT_EQ(field_of(many), "labels");
  ExtractOptions prompt = ok;
  prompt.labels.push_back("a <<SEP>> b");
  EXPECT_EQ(field_of(prompt), "labels");
  ExtractOptions threshold = ok;
  threshold.threshold = 1.5f;
  EXPECT_EQ(field_of(threshold), "threshold");
  EXPECT_EQ(unique_labels({"a", "b", "a"}), (std::vector<std::string>{"a", "b"}));
}

}  // namespace
}  // namespace onepass::runtime
