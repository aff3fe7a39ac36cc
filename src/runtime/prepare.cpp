#include "runtime/prepare.h"

#include <algorithm>
#include <string>

#include "base/error.h"
#include "runtime/extract.h"
#include "runtime/fill_mask.h"
#include "runtime/prompts.h"
#include "runtime/windows.h"

namespace onepass::runtime {
namespace {

[[noreturn]] void too_long(std::size_t tokens, std::size_t limit) {
  throw Error(ErrorKind::kInvalidInput,
              "input has " + std::to_string(tokens) + " tokens, more than the model's limit of " +
                  std::to_string(limit) + " tokens; shorten it or enable truncation");
}

PreparedItem prepare_ids(const LoadedModel& model, const InferenceRequest& request,
                         const InferenceItem& item, std::size_t limit, bool truncate) {
  const model::ModelInfo& info = model.description.info;
  if (item.input_ids.empty()) throw Error(ErrorKind::kInvalidInput, "input_ids is empty");
  if (!item.token_type_ids.empty() && item.token_type_ids.size() != item.input_ids.size()) {
    throw Error(ErrorKind::kInvalidInput,
                "token_type_ids has " + std::to_string(item.token_type_ids.size()) +
                    " entries but input_ids has " + std::to_string(item.input_ids.size()));
  }
  for (std::int32_t id : item.input_ids) {
    if (id < 0 || id >= info.vocab_size) {
      throw Error(ErrorKind::kInvalidInput, "token id " + std::to_string(id) +
                                                " is outside the vocabulary of " +
                                                std::to_string(info.vocab_size) + " ids");
    }
  }
  // Models without a token-type embedding (type_vocab_size 0, or 1 for XLM-R) ignore the ids,
  // so only a value they could not ignore is an error.
  const int types = std::max(info.type_vocab_size, 1);
  for (std::int32_t type : item.token_type_ids) {
    if (type < 0 || (info.type_vocab_size > 0 && type >= types)) {
      throw Error(ErrorKind::kInvalidInput, "token type id " + std::to_string(type) +
                                                " is outside the model's " + std::to_string(types) +
                                                " token types");
    }
  }
  PreparedItem out;
  out.input_ids = item.input_ids;
  if (info.type_vocab_size > 1) out.token_type_ids = item.token_type_ids;
  if (out.input_ids.size() > limit) {
    if (!truncate) too_long(out.input_ids.size(), limit);
    // Pre-tokenized input is cut as given; the caller owns its special tokens.
    const bool left = request.truncation_direction == tokenizer::TruncationDirection::kLeft;
    auto cut = [&](std::vector<std::int32_t>& v) {
      if (v.empty()) return;
      if (left) {
        v.erase(v.begin(), v.end() - static_cast<std::ptrdiff_t>(limit));
      } else {
        v.resize(limit);
      }
    };
    cut(out.input_ids);
    cut(out.token_type_ids);
  }
  return out;
}

}  // namespace

std::size_t effective_max_length(const LoadedModel& model, const InferenceRequest& request) {
  std::size_t limit = static_cast<std::size_t>(model.description.max_input_length);
  if (request.max_length != 0) limit = std::min(limit, request.max_length);
  return limit;
}

bool chunks_long_input(const InferenceRequest& request, const InferenceItem& item) {
  return request.long_input == LongInput::kChunk && !request.truncate && !item.pretokenized &&
         (request.output == OutputKind::kLogits || request.output == OutputKind::kPooled);
}

namespace {

// kFillMask: where the masks are and which tokens are scored.
PreparedItem with_fill_mask(const LoadedModel& model, const InferenceRequest& request,
                            PreparedItem item) {
  item.mask_positions = find_mask_positions(model, item.input_ids);
  if (!request.fill_mask.targets.empty())
    item.target_ids = resolve_targets(*model.tokenizer, request.fill_mask.targets);
  return item;
}

std::vector<PreparedItem> prepare_sequences(const LoadedModel& model,
                                            const InferenceRequest& request,
                                            const InferenceItem& item, bool auto_truncate) {
  const std::size_t limit = effective_max_length(model, request);
  const bool chunk = chunks_long_input(request, item);
  const bool truncate = request.truncate || (auto_truncate && !chunk);
  const std::string_view prompt = prompt_for_item(model.description, request, item);
  if (item.pretokenized) return {prepare_ids(model, request, item, limit, truncate)};

  ONEPASS_CHECK(model.tokenizer != nullptr, "a loaded model has a tokenizer");
  tokenizer::TruncationOptions truncation;
  if (truncate) {
    truncation.max_length = limit;
    truncation.strategy = request.truncation_strategy;
    truncation.direction = request.truncation_direction;
  }
  std::optional<std::string_view> pair;
  if (item.text_pair) pair = *item.text_pair;
  // The prompt is tokenized with the text.
  std::string prompted;
  const std::string_view text = with_prompt(prompt, item.text, prompted);
  tokenizer::Encoding encoding = model.tokenizer->encode(text, pair, truncation, true);
  if (encoding.ids.empty()) throw Error(ErrorKind::kInvalidInput, "the input has no tokens");
  const int vocab = model.description.info.vocab_size;
  for (std::int32_t id : encoding.ids) {
    // A tokenizer whose vocabulary outgrows the model's embedding table is a broken folder;
    // refuse the input rather than read past the table.
    if (id < 0 || id >= vocab) {
      throw Error(ErrorKind::kInvalidInput, "the tokenizer produced id " + std::to_string(id) +
                                                " outside the model's vocabulary");
    }
  }
  if (encoding.ids.size() > limit) {
    if (!chunk) too_long(encoding.ids.size(), limit);
    // Every token not added by the post-processor is the first text's or the second's; the
    // second's count is its own tokenization (as the pair encoding tokenizes it).
    std::size_t content = 0;
    for (std::uint8_t special : encoding.special_tokens_mask) content += special == 0 ? 1 : 0;
    std::size_t second = 0;
    if (pair) {
      second = std::min(content, model.tokenizer->encode(*pair, std::nullopt, {}, false).size());
    }
    SplitText text;
    if (pair && request.chunked_text == ChunkedText::kSecond) {
      // The second text ends before the closing special tokens.
      text.count = second;
      text.begin = encoding.ids.size() - trailing_special_tokens(encoding) - second;
    } else {
      text.count = content - second;
      text.begin = leading_special_tokens(encoding);
    }
    return split_into_windows(encoding, text, limit, request.stride,
                              model.description.info.type_vocab_size > 1,
                              request.max_windows_per_item);
  }
  PreparedItem out;
  if (request.output == OutputKind::kTokenLogits) out.encoding = encoding;
  out.input_ids = std::move(encoding.ids);
  if (model.description.info.type_vocab_size > 1) out.token_type_ids = std::move(encoding.type_ids);
  return {std::move(out)};
}

// kSpans: GLiNER's prompt and words as one sequence (runtime/extract.h). The words past the
// model's max_len are not looked at; a sequence still longer than the token limit is refused.
PreparedItem prepare_spans(const LoadedModel& model, const InferenceRequest& request,
                           const InferenceItem& item) {
  ONEPASS_CHECK(model.tokenizer != nullptr, "a loaded model has a tokenizer");
  if (item.pretokenized) throw Error(ErrorKind::kInvalidInput, "entity extraction takes text");
  const model::SpanExtractionInfo& span = model.description.info.span;
  const tokenizer::Tokenizer& tok = *model.tokenizer;
  const SpecialTokens specials = extract_special_tokens(tok, span);
  ExtractSequence sequence = build_extract_sequence(
      item.text, unique_labels(request.extract.labels), specials,
      static_cast<std::size_t>(span.max_words),
      [&](std::string_view word) { return tok.encode(word, std::nullopt, {}, false).ids; });
  const std::size_t limit = effective_max_length(model, request);
  if (sequence.input_ids.size() > limit) too_long(sequence.input_ids.size(), limit);
  const int vocab = model.description.info.vocab_size;
  for (std::int32_t id : sequence.input_ids) {
    if (id < 0 || id >= vocab) {
      throw Error(ErrorKind::kInvalidInput, "the tokenizer produced id " + std::to_string(id) +
                                                " outside the model's vocabulary");
    }
  }
  PreparedItem out;
  out.input_ids = std::move(sequence.input_ids);
  out.word_positions = std::move(sequence.word_positions);
  out.words = std::move(sequence.words);
  return out;
}

}  // namespace

std::vector<PreparedItem> prepare_item(const LoadedModel& model, const InferenceRequest& request,
                                       const InferenceItem& item, bool auto_truncate) {
  if (request.output == OutputKind::kSpans) return {prepare_spans(model, request, item)};
  std::vector<PreparedItem> prepared = prepare_sequences(model, request, item, auto_truncate);
  if (request.output == OutputKind::kFillMask) {
    ONEPASS_CHECK(prepared.size() == 1, "fill-mask inputs are never chunked");
    prepared[0] = with_fill_mask(model, request, std::move(prepared[0]));
  }
  return prepared;
}

}  // namespace onepass::runtime
