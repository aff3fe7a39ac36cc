#include "api/common/question_answering.h"

#include "api/common/api_error.h"

namespace onepass::api {
namespace {

[[noreturn]] void invalid(const std::string& message, const char* param) {
  throw ApiError(ApiErrorKind::kValidation, message, param);
}

std::optional<std::size_t> get_count(const Json& parameters, const char* field,
                                     std::int64_t minimum) {
  const auto value = get_int(parameters, field);
  if (!value) return std::nullopt;
  if (*value < minimum) {
    std::string message = "'";
    message += field;
    message += "' must be an integer >= ";
    message += std::to_string(minimum);
    invalid(message, field);
  }
  return static_cast<std::size_t>(*value);
}

std::string required_text(const Json& item, const char* field) {
  const Json* value = get_field(item, field);
  if (value == nullptr)
    invalid("each input needs a '" + std::string(field) +
                "' (inputs are {\"question\": ..., "
                "\"context\": ...})",
            field);
  if (!value->is_string()) invalid("'" + std::string(field) + "' must be a string", field);
  std::string text = value->get<std::string>();
  if (text.empty()) invalid("'" + std::string(field) + "' cannot be empty", field);
  return text;
}

}  // namespace

runtime::QuestionAnsweringOptions parse_question_answering_parameters(const Json& parameters) {
  runtime::QuestionAnsweringOptions out;
  auto top_k = get_count(parameters, "top_k", 1);
  if (!top_k) top_k = get_count(parameters, "topk", 1);  // the pipeline's deprecated name
  if (top_k) out.answer.top_k = *top_k;
  if (const auto v = get_count(parameters, "max_answer_len", 1)) out.answer.max_answer_len = *v;
  if (const auto v = get_bool(parameters, "handle_impossible_answer"))
    out.answer.handle_impossible_answer = *v;
  if (const auto v = get_bool(parameters, "align_to_words")) out.answer.align_to_words = *v;
  out.max_seq_len = get_count(parameters, "max_seq_len", 1);
  out.doc_stride = get_count(parameters, "doc_stride", 0);
  // The slow tokenizer's question cut; the fast path (what onepass runs) ignores it.
  get_count(parameters, "max_question_len", 1);
  return out;
}

std::vector<runtime::Question> parse_questions(const Json& inputs, bool& is_list) {
  is_list = inputs.is_array();
  if (!inputs.is_object() && !inputs.is_array())
    invalid(
        "a question-answering model takes inputs {\"question\": ..., \"context\": ...} or a "
        "list of them",
        "inputs");
  std::vector<runtime::Question> out;
  const auto add = [&](const Json& item) {
    if (!item.is_object())
      invalid("each input must be an object {\"question\": ..., \"context\": ...}", "inputs");
    out.push_back({required_text(item, "question"), required_text(item, "context")});
  };
  if (is_list) {
    if (inputs.empty()) invalid("'inputs' cannot be an empty list", "inputs");
    for (const auto& item : inputs) add(item);
  } else {
    add(inputs);
  }
  return out;
}

void write_answers(JsonWriter& json, const std::vector<model::heads::Answer>& answers) {
  const bool one = answers.size() == 1;
  if (!one) json.begin_array();
  for (const auto& a : answers) {
    json.begin_object();
    json.key("score").value(a.score);
    json.key("start").value(a.start);
    json.key("end").value(a.end);
    json.key("answer").value(a.answer);
    json.end_object();
  }
  if (!one) json.end_array();
}

}  // namespace onepass::api
