// The dataset reader, the bundled NLI set, --pad-to-max lengthening and answer comparison.
#include "bench/dataset.h"

#include <gtest/gtest.h>

#include <set>

#include "base/error.h"
#include "bench/answer.h"

namespace onepass::bench {
namespace {

TEST(Dataset, ParsesTextPairAndLabel) {
  const auto samples = parse_dataset(
      "{\"text\":\"a\"}\n\n{\"text\":\"b\",\"text_pair\":\"c\",\"label\":\"neutral\"}\n"
      "{\"text\":\"d\",\"label\":2}\n",
      "t");
  ASSERT_EQ(samples.size(), 3u);
  EXPECT_FALSE(samples[0].text_pair);
  EXPECT_EQ(*samples[1].text_pair, "c");
  EXPECT_EQ(*samples[1].label, "neutral");
  EXPECT_EQ(*samples[2].label, "2");
  EXPECT_TRUE(samples[0].labels.empty());
}

// An extract workload's line names the entity types to find in its text.
TEST(Dataset, ParsesEntityLabels) {
  const auto samples =
      parse_dataset("{\"text\":\"Aspirin in Paris\",\"labels\":[\"drug\",\"city\"]}\n", "t");
  ASSERT_EQ(samples.size(), 1u);
  EXPECT_EQ(samples[0].labels, (std::vector<std::string>{"drug", "city"}));
  EXPECT_THROW(parse_dataset("{\"text\":\"a\",\"labels\":\"drug\"}", "x"), Error);
  EXPECT_THROW(parse_dataset("{\"text\":\"a\",\"labels\":[]}", "x"), Error);
  EXPECT_THROW(parse_dataset("{\"text\":\"a\",\"labels\":[1]}", "x"), Error);
}

TEST(Dataset, ErrorsNameTheLine) {
  try {
    parse_dataset("{\"text\":\"a\"}\n{\"txt\":1}\n", "mine.jsonl");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kInvalidInput);
    EXPECT_NE(std::string(e.what()).find("mine.jsonl line 2"), std::string::npos);
  }
  EXPECT_THROW(parse_dataset("\n\n", "empty"), Error);
  EXPECT_THROW(parse_dataset("{\"text\":\"a\",\"label\":[1]}", "x"), Error);
  EXPECT_THROW(load_dataset("/nonexistent/file.jsonl"), Error);
}

TEST(Dataset, BundledSetIsMultilingualLabelledNli) {
  const auto samples = default_dataset();
  EXPECT_GE(samples.size(), 60u);
  std::map<std::string, int> labels;
  std::set<std::pair<std::string, std::string>> distinct;
  bool cjk = false, cyrillic = false, arabic = false;
  for (const auto& s : samples) {
    ASSERT_TRUE(s.text_pair && s.label);
    ++labels[*s.label];
    distinct.insert({s.text, *s.text_pair});
    cjk =
        cjk || s.text.find("\xE5") != std::string::npos || s.text.find("\xE9") != std::string::npos;
    cyrillic = cyrillic || s.text.find("\xD0") != std::string::npos;
    arabic = arabic || s.text.find("\xD9") != std::string::npos;
  }
  EXPECT_EQ(distinct.size(), samples.size());  // verification needs one answer per input
  EXPECT_EQ(labels.size(), 3u);
  EXPECT_EQ(labels["entailment"], labels["contradiction"]);
  EXPECT_EQ(labels["entailment"], labels["neutral"]);
  EXPECT_TRUE(cjk && cyrillic && arabic);
}

TEST(Dataset, LengthenRepeatsUntilEnoughWordsAndCodePoints) {
  // "ab cd": 2 words, 5 code points. k copies joined by spaces: 2k words, 6k-1 code points.
  // max_len 10 needs 2k >= 10 and 6k-1 >= 40, so k = 7.
  std::string seven = "ab cd";
  for (int i = 1; i < 7; ++i) seven += " ab cd";
  EXPECT_EQ(lengthen_text("ab cd", 10), seven);
  // Two CJK code points, one word: k words, 3k-1 code points; max_len 4 needs k >= 4 and
  // 3k-1 >= 16, so k = 6.
  const std::string two = "\xE4\xB8\x80\xE4\xBA\x8C";
  std::string six = two;
  for (int i = 1; i < 6; ++i) six += " " + two;
  EXPECT_EQ(lengthen_text(two, 4), six);
  EXPECT_EQ(lengthen_text("", 10), "");
  const Sample pair{"x", std::string("y"), std::string("neutral")};
  const Sample long_pair = lengthen_sample(pair, 3);  // 7 copies: 2*7-1 = 13 >= 12
  EXPECT_EQ(long_pair.text, "x x x x x x x");
  EXPECT_EQ(*long_pair.text_pair, "y y y y y y y");
  EXPECT_EQ(*long_pair.label, "neutral");
}

TEST(Answers, SameAnswerWithinTolerance) {
  const Answer a{"entailment", 0.8, {0.1f, 0.8f, 0.1f}};
  Answer b = a;
  b.score += 5e-4;
  b.values[1] += 5e-4f;
  EXPECT_TRUE(same_answer(b, a, 1e-3));
  b.score += 2e-3;
  EXPECT_FALSE(same_answer(b, a, 1e-3));
  Answer c = a;
  c.label = "ENTAILMENT";
  EXPECT_TRUE(same_answer(c, a, 1e-3));
  c.label = "neutral";
  EXPECT_FALSE(same_answer(c, a, 1e-3));
  Answer d = a;
  d.values.pop_back();
  EXPECT_FALSE(same_answer(d, a, 1e-3));
}

TEST(Answers, AgreementIsTheLabelOrTheCosine) {
  EXPECT_TRUE(answers_agree({"Neutral", 0.5, {}}, {"neutral", 0.9, {}}, 1e-3));
  EXPECT_FALSE(answers_agree({"neutral", 0.5, {}}, {"entailment", 0.5, {}}, 1e-3));
  EXPECT_TRUE(answers_agree({"", 0, {1, 2, 3}}, {"", 0, {2, 4, 6}}, 1e-3));  // same direction
  EXPECT_FALSE(answers_agree({"", 0, {1, 0}}, {"", 0, {0, 1}}, 1e-3));
  EXPECT_FALSE(answers_agree({"", 0, {1, 0}}, {"", 0, {1, 0, 0}}, 1e-3));
}

}  // namespace
}  // namespace onepass::bench
