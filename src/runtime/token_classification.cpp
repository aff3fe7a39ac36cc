#include "runtime/token_classification.h"

#include <algorithm>
#include <iterator>

#include "base/error.h"
#include "runtime/field_error.h"
#include "runtime/window_spans.h"

namespace onepass::runtime {
namespace {

[[noreturn]] void too_many_windows(std::size_t windows, std::size_t max_windows) {
  throw FieldError(FieldProblem::kTooManyInputs,
                   "the inputs need " + std::to_string(windows) +
                       " windows or more, above the maximum allowed batch size of " +
                       std::to_string(max_windows) + " (windows count as inputs)",
                   "inputs");
}

// The overflowing windows of `full` (special tokens included) for `limit` tokens a window, as
// the tokenizers library cuts them (Encoding::truncate with a stride, direction right) before
// the post-processor adds the special tokens to each again.
// Throws kTooManyInputs, before any window is built, when there would be more than
// `max_windows`.
std::vector<tokenizer::Encoding> windows_of(const tokenizer::Encoding& full, std::size_t limit,
                                            std::size_t stride, std::size_t max_windows) {
  const std::size_t n = full.ids.size();
  if (full.tokens.size() != n || full.offsets.size() != n || full.special_tokens_mask.size() != n)
    throw Error(ErrorKind::kInternal, "the tokenizer's encoding is inconsistent");
  // The post-processor's tokens: the special run at each end of a single text.
  std::size_t lead = 0;
  while (lead < n && full.special_tokens_mask[lead]) ++lead;
  std::size_t trail = 0;
  while (trail < n - lead && full.special_tokens_mask[n - 1 - trail]) ++trail;
  const std::size_t content = n - lead - trail;
  const std::size_t added = lead + trail;
  if (limit <= added || stride >= limit - added)
    throw FieldError(FieldProblem::kInvalid,
                     "'stride' (" + std::to_string(stride) + ") must be less than the " +
                         std::to_string(limit > added ? limit - added : 0) +
                         " tokens a window holds besides its special tokens",
                     "stride");
  const auto spans = window_spans(content, limit - added, stride);
  if (spans.size() > max_windows) too_many_windows(spans.size(), max_windows);
  std::vector<tokenizer::Encoding> windows;
  for (const auto& [start, stop] : spans) {
    tokenizer::Encoding window;
    tokenizer::append_tokens(window, full, 0, lead);
    tokenizer::append_tokens(window, full, lead + start, lead + stop);
    tokenizer::append_tokens(window, full, n - trail, n);
    windows.push_back(std::move(window));
  }
  return windows;
}

}  // namespace

std::vector<TokenClassificationText> add_token_classification_items(
    InferenceService& service, const ModelDescription& model, std::vector<std::string> texts,
    const TokenClassificationOptions& options, std::size_t limit, std::size_t max_client_batch_size,
    InferenceRequest& request) {
  request.output = OutputKind::kTokenLogits;
  if (options.stride && *options.stride >= limit)
    throw FieldError(
        FieldProblem::kInvalid,
        "'stride' must be less than the model's limit of " + std::to_string(limit) + " tokens",
        "stride");
  std::vector<TokenClassificationText> out;
  out.reserve(texts.size());
  for (auto& text : texts) {
    TokenClassificationText entry;
    entry.first_item = request.items.size();
    if (options.stride) {
      tokenizer::Encoding full = service.tokenize(model.name, text, std::nullopt, true);
      const std::size_t room_left = max_client_batch_size > request.items.size()
                                        ? max_client_batch_size - request.items.size()
                                        : 0;
      if (full.ids.size() > limit)
        entry.windows = windows_of(full, limit, *options.stride, room_left);
    }
    if (entry.windows.empty()) {
      InferenceItem item;
      item.text = text;
      request.items.push_back(std::move(item));
    } else {
      for (const auto& window : entry.windows) {
        InferenceItem item;
        item.pretokenized = true;
        item.input_ids = window.ids;
        item.token_type_ids = window.type_ids;
        request.items.push_back(std::move(item));
      }
    }
    entry.text = std::move(text);
    out.push_back(std::move(entry));
    if (request.items.size() > max_client_batch_size)
      too_many_windows(request.items.size(), max_client_batch_size);
  }
  return out;
}

std::vector<model::heads::Entity> entities_of(const TokenClassificationText& text,
                                              const InferenceResult& result,
                                              const ModelDescription& model,
                                              const TokenClassificationOptions& options) {
  const auto extract = [&](const ItemOutput& item, const tokenizer::Encoding& enc) {
    const model::heads::TokenizedSequence sequence{
        text.text, item.values, enc.ids, enc.tokens, enc.offsets, enc.special_tokens_mask};
    return model::heads::extract_entities(sequence, model.info.id2label, item.token_style,
                                          options.aggregation, options.ignore_labels);
  };
  if (text.windows.empty()) {
    const auto& item = result.items.at(text.first_item);
    return extract(item, item.encoding);
  }
  std::vector<model::heads::Entity> all;
  for (std::size_t w = 0; w < text.windows.size(); ++w) {
    auto entities = extract(result.items.at(text.first_item + w), text.windows[w]);
    all.insert(all.end(), std::make_move_iterator(entities.begin()),
               std::make_move_iterator(entities.end()));
  }
  return text.windows.size() > 1 ? model::heads::merge_overlapping_entities(std::move(all)) : all;
}

}  // namespace onepass::runtime
