// The question-answering pipeline's answer selection (model/heads/question_answering.h) on
// windows worked by hand from transformers' pipelines/question_answering.py: the masking of the
// question and the special tokens, the float32 softmax, the first token's no-answer score,
// max_answer_len, top_k, align_to_words, answers merged over windows, and bad input.
#include "model/heads/question_answering.h"

#include <gtest/gtest.h>

#include <cmath>

#include "base/error.h"

namespace onepass::model::heads {
namespace {

// "[CLS] who ? [SEP] Ada Love ##lace wrote [SEP]" over the context "Ada Lovelace wrote".
struct Window {
  std::vector<float> logits;
  std::vector<std::uint8_t> candidate{1, 0, 0, 0, 1, 1, 1, 1, 0};
  std::vector<std::uint8_t> in_context{0, 0, 0, 0, 1, 1, 1, 1, 0};
  std::vector<std::pair<std::uint32_t, std::uint32_t>> offsets{
      {0, 0}, {0, 3}, {3, 4}, {0, 0}, {0, 3}, {4, 8}, {8, 12}, {13, 18}, {0, 0}};
  std::vector<std::int32_t> word_ids{-1, 0, 1, -1, 0, 1, 1, 2, -1};

  // start and end logits per token
  explicit Window(std::vector<std::pair<float, float>> se) {
    for (const auto& [s, e] : se) {
      logits.push_back(s);
      logits.push_back(e);
    }
  }
  AnswerWindow view() const { return {logits, candidate, in_context, offsets, word_ids}; }
};

const std::string kContext = "Ada Lovelace wrote";

// The pipeline's probabilities for one column, masked tokens at -10000.
std::vector<float> probs(const Window& w, int column) {
  std::vector<float> p;
  float top = -1e30f;
  for (std::size_t t = 0; t < w.candidate.size(); ++t)
    top = std::max(top, w.candidate[t] ? w.logits[t * 2 + column] : -10000.0f);
  float sum = 0;
  for (std::size_t t = 0; t < w.candidate.size(); ++t) {
    p.push_back(std::exp((w.candidate[t] ? w.logits[t * 2 + column] : -10000.0f) - top));
    sum += p.back();
  }
  for (auto& v : p) v /= sum;
  return p;
}

// Question tokens (1, 2) carry the largest logits: they are masked, so never the answer.
const Window kWindow({{1, 1}, {9, 9}, {9, 9}, {0, 0}, {2, 0}, {4, 1}, {0, 3}, {0, 5}, {0, 0}});

TEST(QuestionAnswering, PicksTheBestSpanAndWidensItToWords) {
  const AnswerWindow w = kWindow.view();
  const auto answers = answer_question(kContext, std::span(&w, 1), {});
  ASSERT_EQ(answers.size(), 1u);
  // Best start "Love" (5), best end "wrote" (7): the span (5, 7), the words "Lovelace wrote".
  const auto ps = probs(kWindow, 0), pe = probs(kWindow, 1);
  EXPECT_FLOAT_EQ(answers[0].score, ps[5] * pe[7]);
  EXPECT_EQ(answers[0].start, 4u);
  EXPECT_EQ(answers[0].end, 18u);
  EXPECT_EQ(answers[0].answer, "Lovelace wrote");
}

TEST(QuestionAnswering, AlignToWordsOffKeepsTheTokensOffsets) {
  // Best span (6, 6): "##lace" alone, or its whole word "Lovelace".
  const Window w({{0, 0}, {9, 9}, {9, 9}, {0, 0}, {0, 0}, {0, 0}, {5, 5}, {0, 0}, {0, 0}});
  const AnswerWindow v = w.view();
  AnswerOptions o;
  EXPECT_EQ(answer_question(kContext, std::span(&v, 1), o)[0].answer, "Lovelace");
  o.align_to_words = false;
  const auto a = answer_question(kContext, std::span(&v, 1), o);
  EXPECT_EQ(a[0].answer, "lace");
  EXPECT_EQ(a[0].start, 8u);
  EXPECT_EQ(a[0].end, 12u);
}

TEST(QuestionAnswering, MaxAnswerLenAndTopK) {
  const AnswerWindow w = kWindow.view();
  AnswerOptions o;
  o.max_answer_len = 1;  // only s == e
  const auto one = answer_question(kContext, std::span(&w, 1), o);
  const auto ps = probs(kWindow, 0), pe = probs(kWindow, 1);
  // s == e: 4: .., 5: ps5*pe5, 6: ps6*pe6, 7: ps7*pe7; the best of them.
  float best = 0;
  for (int t : {4, 5, 6, 7}) best = std::max(best, ps[t] * pe[t]);
  EXPECT_FLOAT_EQ(one[0].score, best);
  // top_k above the valid spans: the 10 spans s <= e over the 4 context tokens, best first
  // (the first token's spans score 0 and sort after them).
  o.max_answer_len = 15;
  o.top_k = 100;
  const auto all = answer_question(kContext, std::span(&w, 1), o);
  ASSERT_GE(all.size(), 10u);
  for (std::size_t i = 1; i < all.size(); ++i) EXPECT_GE(all[i - 1].score, all[i].score);
  EXPECT_GT(all[9].score, 0.0f);
  for (std::size_t i = 10; i < all.size(); ++i) EXPECT_EQ(all[i].score, 0.0f);
}

TEST(QuestionAnswering, NoAnswerScoreIsTheFirstTokens) {
  // The first token holds the largest start and end logits: "no answer" wins.
  const Window w({{8, 8}, {9, 9}, {9, 9}, {0, 0}, {2, 0}, {4, 1}, {0, 3}, {0, 5}, {0, 0}});
  const AnswerWindow v = w.view();
  AnswerOptions o;
  o.handle_impossible_answer = true;
  o.top_k = 2;
  const auto a = answer_question(kContext, std::span(&v, 1), o);
  ASSERT_EQ(a.size(), 2u);
  const auto ps = probs(w, 0), pe = probs(w, 1);
  EXPECT_FLOAT_EQ(a[0].score, ps[0] * pe[0]);
  EXPECT_EQ(a[0].answer, "");
  EXPECT_EQ(a[0].start, 0u);
  EXPECT_EQ(a[0].end, 0u);
  EXPECT_FLOAT_EQ(a[1].score, ps[5] * pe[7]);
  EXPECT_EQ(a[1].answer, "Lovelace wrote");
}

TEST(QuestionAnswering, WindowsAreMergedByScore) {
  // A second window of the same context whose best span ("Ada", 4..4) is surer.
  const Window second({{0, 0}, {9, 9}, {9, 9}, {0, 0}, {9, 9}, {0, 0}, {0, 0}, {0, 0}, {0, 0}});
  const AnswerWindow both[] = {kWindow.view(), second.view()};
  AnswerOptions o;
  o.top_k = 2;
  const auto a = answer_question(kContext, both, o);
  ASSERT_EQ(a.size(), 2u);
  EXPECT_EQ(a[0].answer, "Ada");
  EXPECT_EQ(a[1].answer, "Lovelace wrote");
  // The same logits in two windows that place the context's tokens differently: equal scores
  // keep the windows' order (a stable sort), so the first window's span comes first.
  Window shifted = kWindow;
  shifted.offsets = {{0, 0}, {0, 3}, {3, 4}, {0, 0}, {4, 8}, {9, 13}, {13, 17}, {0, 3}, {0, 0}};
  const AnswerWindow twice[] = {kWindow.view(), shifted.view()};
  const auto t = answer_question(kContext, twice, o);
  ASSERT_EQ(t.size(), 2u);
  EXPECT_EQ(t[0].score, t[1].score);
  EXPECT_EQ(t[0].answer, "Lovelace wrote");
  EXPECT_EQ(t[1].answer, "");  // the second window's span ends before it starts
}

TEST(QuestionAnswering, SpansOfDifferentLengthsAreRefused) {
  Window w = kWindow;
  w.word_ids.pop_back();
  const AnswerWindow v = w.view();
  EXPECT_THROW(answer_question(kContext, std::span(&v, 1), {}), Error);
}

}  // namespace
}  // namespace onepass::model::heads
