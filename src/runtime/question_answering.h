// Extractive question answering below the dialects: each (question, context) cut into the
// windows the Hugging Face pipeline's fast tokenizer cuts, added to a request as pre-tokenized
// items, and the answers picked from the windows' start and end logits
// (model/heads/question_answering.h). The dialects read and write the pipeline's JSON
// (api/common/question_answering.h); `onepass run` and a second transport reuse this as it is.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "model/heads/question_answering.h"
#include "runtime/service.h"

namespace onepass::runtime {

// The pipeline's limits on one window: max_seq_len tokens (default the smaller of 384 and the
// model's limit), of which doc_stride context tokens are shared with the next window (default
// min(max_seq_len / 2, 128)).
inline constexpr std::size_t kDefaultMaxSeqLen = 384;
inline constexpr std::size_t kMaxDocStride = 128;

struct QuestionAnsweringOptions {
  model::heads::AnswerOptions answer;
  std::optional<std::size_t> max_seq_len;
  std::optional<std::size_t> doc_stride;
};

struct Question {
  std::string question;
  std::string context;
};

// One window: the tokens the model reads and where the context's run lies in them.
struct AnswerWindowTokens {
  tokenizer::Encoding encoding;
  std::size_t context_begin = 0;  // tokens [context_begin, context_end) are the context's
  std::size_t context_end = 0;
};

// One (question, context) of a request and the request items (its windows, in order) that
// carry it.
struct QuestionPlan {
  std::string context;
  std::size_t first_item = 0;
  std::vector<AnswerWindowTokens> windows;
};

// Tokenizes each pair on the caller's thread and appends its windows to `request` as
// pre-tokenized items (output kTokenLogits): the question whole and the special tokens in every
// window, the context's tokens in runs of max_seq_len less those, each run starting
// max_seq_len - doc_stride - (question and special tokens) after the last, as the tokenizers
// library cuts `truncation="only_second"` with a stride. FieldError kInvalid naming the field
// when the question leaves no room for the context or the stride leaves no room for new context
// tokens; kTooManyInputs past `max_client_batch_size` windows.
std::vector<QuestionPlan> add_question_answering_items(InferenceService& service,
                                                       const ModelDescription& model,
                                                       std::vector<Question> questions,
                                                       const QuestionAnsweringOptions& options,
                                                       std::size_t max_client_batch_size,
                                                       InferenceRequest& request);

// The answers of one pair from its items of a kTokenLogits result, best first.
std::vector<model::heads::Answer> answers_of(const QuestionPlan& plan,
                                             const InferenceResult& result,
                                             const QuestionAnsweringOptions& options);

}  // namespace onepass::runtime
