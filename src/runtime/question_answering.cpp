#include "runtime/question_answering.h"

#include <algorithm>

#include "base/error.h"
#include "runtime/field_error.h"
#include "runtime/input_limits.h"
#include "runtime/window_spans.h"

namespace onepass::runtime {
namespace {

[[noreturn]] void invalid(const std::string& message, const char* field) {
  throw FieldError(FieldProblem::kInvalid, message, field);
}

[[noreturn]] void too_many_windows(const std::string& message) {
  throw FieldError(FieldProblem::kTooManyInputs, message, "inputs");
}

// The pair's windows (see add_question_answering_items).
std::vector<AnswerWindowTokens> windows_of(const tokenizer::Encoding& full,
                                           std::size_t context_tokens, std::size_t max_seq_len,
                                           std::size_t doc_stride, std::size_t max_windows) {
  const std::size_t n = full.ids.size();
  if (full.tokens.size() != n || full.offsets.size() != n || full.special_tokens_mask.size() != n ||
      full.word_ids.size() != n)
    throw Error(ErrorKind::kInternal, "the tokenizer's encoding is inconsistent");
  const std::size_t trail = trailing_special_tokens(full);
  if (context_tokens == 0)
    invalid("the context has no tokens (only white space or characters the tokenizer drops)",
            "context");
  if (n < trail + context_tokens + 1)
    throw Error(ErrorKind::kInternal, "the tokenizer's pair encoding is inconsistent");
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
  const auto spans = window_spans(context_tokens, room, doc_stride);
  if (spans.size() > max_windows)
    too_many_windows("the context needs " + std::to_string(spans.size()) +
                     " windows, above the maximum allowed batch size of " +
                     std::to_string(max_windows) + " (windows count as inputs)");
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

std::vector<QuestionPlan> add_question_answering_items(InferenceService& service,
                                                       const ModelDescription& model,
                                                       std::vector<Question> questions,
                                                       const QuestionAnsweringOptions& options,
                                                       std::size_t max_client_batch_size,
                                                       InferenceRequest& request) {
  request.output = OutputKind::kTokenLogits;
  const auto limit = static_cast<std::size_t>(model.max_input_length);
  const std::size_t max_seq_len = options.max_seq_len.value_or(std::min(kDefaultMaxSeqLen, limit));
  if (max_seq_len > limit)
    invalid("'max_seq_len' (" + std::to_string(max_seq_len) + ") is above the model's limit of " +
                std::to_string(limit) + " tokens",
            "max_seq_len");
  const std::size_t doc_stride =
      options.doc_stride.value_or(std::min(max_seq_len / 2, kMaxDocStride));
  if (doc_stride > max_seq_len)
    invalid("'doc_stride' (" + std::to_string(doc_stride) + ") is larger than max_seq_len (" +
                std::to_string(max_seq_len) + ")",
            "doc_stride");
  std::vector<QuestionPlan> plans;
  for (auto& q : questions) {
    check_input_bytes(q.question, model.max_input_bytes, "question");
    check_input_bytes(q.context, model.max_input_bytes, "context");
    const tokenizer::Encoding full = service.tokenize(model.name, q.question, q.context, true);
    // Where the context starts: the pair's own tokens less the question's, the short text of
    // the two (tokenized again alone, not the context, which may be thousands of tokens).
    const std::size_t question_tokens =
        service.tokenize(model.name, q.question, std::nullopt, false).ids.size();
    const auto content = static_cast<std::size_t>(
        std::count(full.special_tokens_mask.begin(), full.special_tokens_mask.end(), 0));
    if (content < question_tokens)
      throw Error(ErrorKind::kInternal, "the tokenizer's pair encoding is inconsistent");
    const std::size_t context_tokens = content - question_tokens;
    const std::size_t room_left = max_client_batch_size > request.items.size()
                                      ? max_client_batch_size - request.items.size()
                                      : 0;
    QuestionPlan plan;
    plan.first_item = request.items.size();
    plan.windows = windows_of(full, context_tokens, max_seq_len, doc_stride, room_left);
    for (const auto& w : plan.windows) {
      InferenceItem item;
      item.pretokenized = true;
      item.input_ids = w.encoding.ids;
      item.token_type_ids = w.encoding.type_ids;
      request.items.push_back(std::move(item));
    }
    plan.context = std::move(q.context);
    plans.push_back(std::move(plan));
    // A context that fits is one window: it counts against the limit too.
    if (request.items.size() > max_client_batch_size)
      too_many_windows("the inputs need " + std::to_string(request.items.size()) +
                       " windows or more, above the maximum allowed batch size of " +
                       std::to_string(max_client_batch_size) + " (windows count as inputs)");
  }
  return plans;
}

std::vector<model::heads::Answer> answers_of(const QuestionPlan& plan,
                                             const InferenceResult& result,
                                             const QuestionAnsweringOptions& options) {
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
  return model::heads::answer_question(plan.context, windows, options.answer);
}

}  // namespace onepass::runtime
