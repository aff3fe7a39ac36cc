// Answers of an extractive question-answering model (*ForQuestionAnswering), as transformers'
// question-answering pipeline (pipelines/question_answering.py, QuestionAnsweringPipeline with a
// fast tokenizer: select_starts_ends, decode_spans, get_indices, postprocess) makes them from
// the start and end logits of each window of the context:
//   - tokens that cannot hold the answer (the question, the special tokens but the first, which
//     models trained on SQuAD 2 use for "no answer") get the logit -10000 before a float32
//     softmax over the window, for the start and for the end apart;
//   - with handle_impossible_answer, the no-answer score is the smallest over the windows of
//     p_start(first token) * p_end(first token); then the first token's two are set to 0;
//   - a span (s, e) with s <= e < s + max_answer_len scores p_start(s) * p_end(e); each window
//     keeps its top_k spans (ties: the smaller s, then e, numpy's first arg-max), then drops
//     those whose start or end cannot hold the answer (the first token passes that filter, a
//     quirk of the pipeline's numpy: its score is 0 by then, so it only shows when top_k asks
//     for more spans than there are);
//   - with align_to_words a span widens to whole words: from the first token of the start's
//     word to the last token of the end's word (tokenizers' word_to_chars, within the window);
//     a token with no word (a special token) keeps the token offsets;
//   - all windows' answers, and the no-answer one last, sorted by score (stable), top_k kept.
// The pipeline ranks every (s, e) of the window, invalid ones at score 0 included; where top_k
// reaches past the spans with a positive score, which zero-score spans numpy returns is
// arbitrary, and here they are valid spans only.
// A pure function: every route that answers questions (the toolkit's) calls it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace onepass::model::heads {

struct AnswerOptions {
  std::size_t top_k = 1;
  std::size_t max_answer_len = 15;
  bool handle_impossible_answer = false;
  bool align_to_words = true;
};

// One window as the model read it: [first token, question, specials, a run of the context,
// specials].
struct AnswerWindow {
  std::span<const float> logits;             // [tokens, 2]: start logit, end logit
  std::span<const std::uint8_t> candidate;   // 1: may hold the answer (p_mask 0)
  std::span<const std::uint8_t> in_context;  // 1: a token of the context (sequence 1)
  // [start, end) code points of the context, for the context's tokens.
  std::span<const std::pair<std::uint32_t, std::uint32_t>> offsets;
  std::span<const std::int32_t> word_ids;  // the tokenizer's; -1 for special tokens
};

struct Answer {
  float score = 0.0f;
  std::size_t start = 0;  // code points of the context, [start, end)
  std::size_t end = 0;
  std::string answer;  // context[start:end]
};

// The pipeline's answers for one (question, context), best first, at most top_k. Throws
// onepass::Error(kInternal) when a window's spans disagree in length (a caller's bug).
std::vector<Answer> answer_question(std::string_view context, std::span<const AnswerWindow> windows,
                                    const AnswerOptions& options);

}  // namespace onepass::model::heads
