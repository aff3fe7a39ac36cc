// Extractive question answering in the Hugging Face pipeline's JSON (the toolkit's /invocations
// and POST /): the request's inputs and parameters read, the answers written. The windows and
// the answer picking are the task's own, below the dialects (runtime/question_answering.h).
#pragma once

#include <vector>

#include "api/common/json_request.h"
#include "api/common/json_writer.h"
#include "runtime/question_answering.h"

namespace onepass::api {

// top_k (or the deprecated topk) >= 1, max_answer_len >= 1, max_seq_len >= 1, doc_stride >= 0
// and not above max_seq_len, handle_impossible_answer, align_to_words; max_question_len is
// accepted and, as with a fast tokenizer, not applied. ApiError kValidation naming the field.
runtime::QuestionAnsweringOptions parse_question_answering_parameters(const Json& parameters);

// The pipeline's inputs: {"question": ..., "context": ...} (`is_list` false) or a list of them.
// ApiError kValidation for anything else, or for a missing, non-string or empty question or
// context.
std::vector<runtime::Question> parse_questions(const Json& inputs, bool& is_list);

// The pipeline's shape: one answer as {"score", "start", "end", "answer"}, any other number
// (top_k above 1, or none left) as a list of them.
void write_answers(JsonWriter& json, const std::vector<model::heads::Answer>& answers);

}  // namespace onepass::api
