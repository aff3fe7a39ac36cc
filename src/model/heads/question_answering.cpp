#include "model/heads/question_answering.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>

#include "base/error.h"
#include "model/heads/text_slice.h"

namespace onepass::model::heads {
namespace {

// The pipeline's masked value for tokens that cannot hold the answer.
constexpr float kMasked = -10000.0f;

// exp(x - max) / sum over the window, in float32 as numpy computes it on the model's float32
// logits; `column` 0 is the start logit, 1 the end logit.
std::vector<float> masked_softmax(const AnswerWindow& w, std::size_t column) {
  const std::size_t n = w.candidate.size();
  std::vector<float> p(n);
  float top = -std::numeric_limits<float>::infinity();
  for (std::size_t t = 0; t < n; ++t) {
    p[t] = w.candidate[t] ? w.logits[t * 2 + column] : kMasked;
    top = std::max(top, p[t]);
  }
  float sum = 0.0f;
  for (auto& v : p) {
    v = std::exp(v - top);
    sum += v;
  }
  for (auto& v : p) v /= sum;
  return p;
}

struct Span {
  float score;
  std::size_t start;
  std::size_t end;
};

// The window's top_k spans (decode_spans), best first, then those whose ends may hold the
// answer; the first token counts as such (the pipeline's np.isin also matches its row index 0).
std::vector<Span> best_spans(const std::vector<float>& start, const std::vector<float>& end,
                             const AnswerWindow& w, const AnswerOptions& options) {
  const std::size_t n = start.size();
  std::vector<Span> spans;
  for (std::size_t s = 0; s < n; ++s) {
    const std::size_t last = std::min(n, s + options.max_answer_len);
    for (std::size_t e = s; e < last; ++e) spans.push_back({start[s] * end[e], s, e});
  }
  const std::size_t k = std::min(options.top_k, spans.size());
  // Higher score first; ties in row-major order, as numpy's arg-max takes the first.
  const auto better = [](const Span& a, const Span& b) {
    if (a.score != b.score) return a.score > b.score;
    return a.start != b.start ? a.start < b.start : a.end < b.end;
  };
  std::partial_sort(spans.begin(), spans.begin() + static_cast<std::ptrdiff_t>(k), spans.end(),
                    better);
  spans.resize(k);
  const auto allowed = [&](std::size_t t) { return t == 0 || w.candidate[t] != 0; };
  std::erase_if(spans, [&](const Span& s) { return !allowed(s.start) || !allowed(s.end); });
  return spans;
}

// get_indices: the answer's code points in the context.
std::pair<std::size_t, std::size_t> answer_chars(const AnswerWindow& w, std::size_t s,
                                                 std::size_t e, bool align_to_words) {
  if (align_to_words && w.word_ids[s] >= 0 && w.word_ids[e] >= 0) {
    // word_to_chars(word, sequence_index=1): the word's first and last token in the context.
    const auto first_of = [&](std::int32_t word) {
      for (std::size_t t = 0; t < w.word_ids.size(); ++t)
        if (w.in_context[t] && w.word_ids[t] == word) return std::optional<std::size_t>(t);
      return std::optional<std::size_t>();
    };
    const auto last_of = [&](std::int32_t word) {
      for (std::size_t t = w.word_ids.size(); t-- > 0;)
        if (w.in_context[t] && w.word_ids[t] == word) return std::optional<std::size_t>(t);
      return std::optional<std::size_t>();
    };
    const auto first = first_of(w.word_ids[s]);
    const auto last = last_of(w.word_ids[e]);
    if (first && last) return {w.offsets[*first].first, w.offsets[*last].second};
  }
  return {w.offsets[s].first, w.offsets[e].second};
}

}  // namespace

std::vector<Answer> answer_question(std::string_view context, std::span<const AnswerWindow> windows,
                                    const AnswerOptions& options) {
  const auto starts = code_point_starts(context);
  float null_score = 1000000.0f;  // the pipeline's min_null_score start: large and positive
  std::vector<Answer> answers;
  for (const AnswerWindow& w : windows) {
    const std::size_t n = w.candidate.size();
    if (n == 0 || w.logits.size() != n * 2 || w.in_context.size() != n || w.offsets.size() != n ||
        w.word_ids.size() != n)
      throw Error(ErrorKind::kInternal, "question answering: a window's spans disagree");
    std::vector<float> start = masked_softmax(w, 0);
    std::vector<float> end = masked_softmax(w, 1);
    if (options.handle_impossible_answer) null_score = std::min(null_score, start[0] * end[0]);
    start[0] = 0.0f;
    end[0] = 0.0f;
    for (const Span& span : best_spans(start, end, w, options)) {
      const auto [begin, stop] = answer_chars(w, span.start, span.end, options.align_to_words);
      answers.push_back(
          {span.score, begin, stop, std::string(slice(context, starts, begin, stop))});
    }
  }
  if (options.handle_impossible_answer) answers.push_back({null_score, 0, 0, ""});
  std::stable_sort(answers.begin(), answers.end(),
                   [](const Answer& a, const Answer& b) { return a.score > b.score; });
  if (answers.size() > options.top_k) answers.resize(options.top_k);
  return answers;
}

}  // namespace onepass::model::heads
