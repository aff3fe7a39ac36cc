#include "api/common/question_answering.h"

#include <algorithm>

#include "api/common/api_error.h"
#include "runtime/input_limits.h"
#include "runtime/window_spans.h"

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

// The pair's windows (see add_question_answering_items).
std::vector<AnswerWindowTokens> windows_of(const tokenizer::Encoding& full,
                                           std::size_t context_tokens, std::size_t max_seq_len,
                                           std::size_t doc_stride, std::size_t max_windows) {
  const std::size_t n = full.ids.size();
  if (full.tokens.size() != n || full.offsets.size() != n || full.special_tokens_mask.size() != n ||
      full.word_ids.size() != n)
    throw ApiError(ApiErrorKind::kInternal, "the tokenizer's encoding is inconsistent");
  const std::size_t trail = runtime::trailing_special_tokens(full);
  if (context_tokens == 0)
    invalid("the context has no tokens (only white space or characters the tokenizer drops)",
            "context");
  if (n < trail + context_tokens + 1)
    throw ApiError(ApiErrorKind::kInternal, "the tokenizer's pair encoding is inconsistent");
  const std::size_t context_end = n - trail;
  const std::size_t context_begin = context_end - context_tokens;
  const std::size_t kept = context_begin + trail;  // the question and the special tokens
  if (n <= max_seq_len) return {{full, context_begin, context_end}};
  if (max_seq_len <= kept)
    invalid("the question and the special tokens take " + std::to_string(kept) +
                " tokens, which leaves no room for the context in max_seq_len " +
                std::to_string(max_seq_len),
            "question");
  const std::size_t room = max_seq_len - kept;
  if (doc_stride >= room)
    invalid("'doc_stride' (" + std::to_string(doc_stride) + ") must be less than the " +
                std::to_string(room) + " context tokens a window of max_seq_len " +
                std::to_string(max_seq_len) + " holds beside this question",
            "doc_stride");
  const auto spans = runtime::window_spans(context_tokens, room, doc_stride);
  if (spans.size() > max_windows)
    throw ApiError(ApiErrorKind::kTooManyInputs,
                   "the context needs " + std::to_string(spans.size()) +
                       " windows, above the maximum allowed batch size of " +
                       std::to_string(max_windows) + " (windows count as inputs)",
                   "inputs");
  std::vector<AnswerWindowTokens> windows;
  for (const auto& [start, stop] : spans) {
    AnswerWindowTokens w;
    tokenizer::append_tokens(w.encoding, full, 0, context_begin);
    tokenizer::append_tokens(w.encoding, full, context_begin + start, context_begin + stop);
    tokenizer::append_tokens(w.encoding, full, context_end, n);
    w.context_begin = context_begin;
    w.context_end = context_begin + (stop - start);
    windows.push_back(std::move(w));
  }
  return windows;
}

}  // namespace

QuestionAnsweringParameters parse_question_answering_parameters(const Json& parameters) {
  QuestionAnsweringParameters out;
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

std::vector<Question> parse_questions(const Json& inputs, bool& is_list) {
  is_list = inputs.is_array();
  if (!inputs.is_object() && !inputs.is_array())
    invalid(
        "a question-answering model takes inputs {\"question\": ..., \"context\": ...} or a "
        "list of them",
        "inputs");
  std::vector<Question> out;
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

std::vector<QuestionPlan> add_question_answering_items(runtime::InferenceService& service,
                                                       const runtime::ModelDescription& model,
                                                       std::vector<Question> questions,
                                                       const QuestionAnsweringParameters& params,
                                                       std::size_t max_client_batch_size,
                                                       runtime::InferenceRequest& request) {
  request.output = runtime::OutputKind::kTokenLogits;
  const auto limit = static_cast<std::size_t>(model.max_input_length);
  const std::size_t max_seq_len = params.max_seq_len.value_or(std::min(kDefaultMaxSeqLen, limit));
  if (max_seq_len > limit)
    invalid("'max_seq_len' (" + std::to_string(max_seq_len) + ") is above the model's limit of " +
                std::to_string(limit) + " tokens",
            "max_seq_len");
  const std::size_t doc_stride =
      params.doc_stride.value_or(std::min(max_seq_len / 2, kMaxDocStride));
  if (doc_stride > max_seq_len)
    invalid("'doc_stride' (" + std::to_string(doc_stride) + ") is larger than max_seq_len (" +
                std::to_string(max_seq_len) + ")",
            "doc_stride");
  std::vector<QuestionPlan> plans;
  for (auto& q : questions) {
    runtime::check_input_bytes(q.question, model.max_input_bytes, "question");
    runtime::check_input_bytes(q.context, model.max_input_bytes, "context");
    const tokenizer::Encoding full = service.tokenize(model.name, q.question, q.context, true);
    // Where the context starts: the pair's own tokens less the question's, the short text of
    // the two (tokenized again alone, not the context, which may be thousands of tokens).
    const std::size_t question_tokens =
        service.tokenize(model.name, q.question, std::nullopt, false).ids.size();
    const auto content = static_cast<std::size_t>(
        std::count(full.special_tokens_mask.begin(), full.special_tokens_mask.end(), 0));
    if (content < question_tokens)
      throw ApiError(ApiErrorKind::kInternal, "the tokenizer's pair encoding is inconsistent");
    const std::size_t context_tokens = content - question_tokens;
    const std::size_t room_left = max_client_batch_size > request.items.size()
                                      ? max_client_batch_size - request.items.size()
                                      : 0;
    QuestionPlan plan;
    plan.first_item = request.items.size();
    plan.windows = windows_of(full, context_tokens, max_seq_len, doc_stride, room_left);
    for (const auto& w : plan.windows) {
      runtime::InferenceItem item;
      item.pretokenized = true;
      item.input_ids = w.encoding.ids;
      item.token_type_ids = w.encoding.type_ids;
      request.items.push_back(std::move(item));
    }
    plan.context = std::move(q.context);
    plans.push_back(std::move(plan));
    // A context that fits is one window: it counts against the limit too.
    if (request.items.size() > max_client_batch_size)
      throw ApiError(ApiErrorKind::kTooManyInputs,
                     "the inputs need " + std::to_string(request.items.size()) +
                         " windows or more, above the maximum allowed batch size of " +
                         std::to_string(max_client_batch_size) + " (windows count as inputs)",
                     "inputs");
  }
  return plans;
}

std::vector<model::heads::Answer> answers_of(const QuestionPlan& plan,
                                             const runtime::InferenceResult& result,
                                             const QuestionAnsweringParameters& params) {
  std::vector<std::vector<std::uint8_t>> candidate(plan.windows.size());
  std::vector<std::vector<std::uint8_t>> in_context(plan.windows.size());
  std::vector<model::heads::AnswerWindow> windows;
  for (std::size_t i = 0; i < plan.windows.size(); ++i) {
    const AnswerWindowTokens& w = plan.windows[i];
    const tokenizer::Encoding& e = w.encoding;
    const std::size_t n = e.ids.size();
    in_context[i].assign(n, 0);
    std::fill(in_context[i].begin() + static_cast<std::ptrdiff_t>(w.context_begin),
              in_context[i].begin() + static_cast<std::ptrdiff_t>(w.context_end), 1);
    // p_mask 0: the context, and every occurrence of the CLS token (the window's first special
    // token), which SQuAD 2 models point at for "no answer".
    candidate[i] = in_context[i];
    if (n > 0 && e.special_tokens_mask[0]) {
      for (std::size_t t = 0; t < n; ++t)
        if (e.ids[t] == e.ids[0]) candidate[i][t] = 1;
    }
    windows.push_back({result.items.at(plan.first_item + i).values, candidate[i], in_context[i],
                       e.offsets, e.word_ids});
  }
  return model::heads::answer_question(plan.context, windows, params.answer);
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
