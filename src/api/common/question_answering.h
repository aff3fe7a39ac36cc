// Extractive question answering in the Hugging Face pipeline's answer shape (the toolkit's
// /invocations and POST /): the request's inputs and parameters, each (question, context) as
// the windows the pipeline's fast tokenizer cuts, and the answers as JSON
// (model/heads/question_answering.h picks them).
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "api/common/json_request.h"
#include "api/common/json_writer.h"
#include "model/heads/question_answering.h"
#include "runtime/service.h"

namespace onepass::api {

// The pipeline's limits on one window: max_seq_len tokens (default the smaller of 384 and the
// model's limit), of which doc_stride context tokens are shared with the next window (default
// min(max_seq_len / 2, 128)).
inline constexpr std::size_t kDefaultMaxSeqLen = 384;
inline constexpr std::size_t kMaxDocStride = 128;

struct QuestionAnsweringParameters {
  model::heads::AnswerOptions answer;
  std::optional<std::size_t> max_seq_len;
  std::optional<std::size_t> doc_stride;
};

// top_k (or the deprecated topk) >= 1, max_answer_len >= 1, max_seq_len >= 1, doc_stride >= 0
// and not above max_seq_len, handle_impossible_answer, align_to_words; max_question_len is
// accepted and, as with a fast tokenizer, not applied. ApiError kValidation naming the field.
QuestionAnsweringParameters parse_question_answering_parameters(const Json& parameters);

struct Question {
  std::string question;
  std::string context;
};

// The pipeline's inputs: {"question": ..., "context": ...} (`is_list` false) or a list of them.
// ApiError kValidation for anything else, or for a missing, non-string or empty question or
// context.
std::vector<Question> parse_questions(const Json& inputs, bool& is_list);

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
// library cuts `truncation="only_second"` with a stride. ApiError kValidation when the question
// leaves no room for the context or the stride leaves no room for new context tokens;
// kTooManyInputs past --max-client-batch-size windows.
std::vector<QuestionPlan> add_question_answering_items(runtime::InferenceService& service,
                                                       const runtime::ModelDescription& model,
                                                       std::vector<Question> questions,
                                                       const QuestionAnsweringParameters& params,
                                                       std::size_t max_client_batch_size,
                                                       runtime::InferenceRequest& request);

// The answers of one pair from its items of a kTokenLogits result, best first.
std::vector<model::heads::Answer> answers_of(const QuestionPlan& plan,
                                             const runtime::InferenceResult& result,
                                             const QuestionAnsweringParameters& params);

// The pipeline's shape: one answer as {"score", "start", "end", "answer"}, any other number
// (top_k above 1, or none left) as a list of them.
void write_answers(JsonWriter& json, const std::vector<model::heads::Answer>& answers);

}  // namespace onepass::api
