#include "api/common/token_classification.h"

#include <algorithm>
#include <iterator>

#include "api/common/api_error.h"
#include "runtime/window_spans.h"

namespace onepass::api {

namespace {

[[noreturn]] void too_many_windows(std::size_t windows, std::size_t max_windows) {
  throw ApiError(ApiErrorKind::kTooManyInputs,
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
    throw ApiError(ApiErrorKind::kInternal, "the tokenizer's encoding is inconsistent");
  // The post-processor's tokens: the special run at each end of a single text.
  std::size_t lead = 0;
  while (lead < n && full.special_tokens_mask[lead]) ++lead;
  std::size_t trail = 0;
  while (trail < n - lead && full.special_tokens_mask[n - 1 - trail]) ++trail;
  const std::size_t content = n - lead - trail;
  const std::size_t added = lead + trail;
  if (limit <= added || stride >= limit - added)
    throw ApiError(ApiErrorKind::kValidation,
                   "'stride' (" + std::to_string(stride) + ") must be less than the " +
                       std::to_string(limit > added ? limit - added : 0) +
                       " tokens a window holds besides its special tokens",
                   "stride");
  const auto spans = runtime::window_spans(content, limit - added, stride);
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

TokenClassificationParameters parse_token_classification_parameters(const Json& parameters) {
  TokenClassificationParameters out;
  if (const auto name = get_string(parameters, "aggregation_strategy")) {
    const auto aggregation = model::heads::aggregation_from_name(*name);
    if (!aggregation) {
      throw ApiError(ApiErrorKind::kValidation,
                     "'aggregation_strategy' must be none, simple, first, average or max",
                     "aggregation_strategy");
    }
    out.aggregation = *aggregation;
  }
  if (const Json* labels = get_field(parameters, "ignore_labels")) {
    if (!labels->is_array()) {
      throw ApiError(ApiErrorKind::kValidation, "'ignore_labels' must be a list of strings",
                     "ignore_labels");
    }
    out.ignore_labels.clear();
    for (const auto& label : *labels) {
      if (!label.is_string()) {
        throw ApiError(ApiErrorKind::kValidation, "'ignore_labels' must be a list of strings",
                       "ignore_labels");
      }
      out.ignore_labels.push_back(label.get<std::string>());
    }
  }
  if (const auto stride = get_int(parameters, "stride")) {
    if (*stride < 0)
      throw ApiError(ApiErrorKind::kValidation, "'stride' must be a non-negative integer",
                     "stride");
    // The pipeline's own refusal: overlapping windows need entities to merge.
    if (out.aggregation == model::heads::Aggregation::kNone)
      throw ApiError(ApiErrorKind::kValidation,
                     "'stride' needs an aggregation_strategy other than none (simple, first, "
                     "average or max)",
                     "stride");
    out.stride = static_cast<std::size_t>(*stride);
  }
  return out;
}

std::vector<TokenClassificationText> add_token_classification_items(
    runtime::InferenceService& service, const runtime::ModelDescription& model,
    std::vector<std::string> texts, const TokenClassificationParameters& params, std::size_t limit,
    std::size_t max_client_batch_size, runtime::InferenceRequest& request) {
  request.output = runtime::OutputKind::kTokenLogits;
  if (params.stride && *params.stride >= limit)
    throw ApiError(
        ApiErrorKind::kValidation,
        "'stride' must be less than the model's limit of " + std::to_string(limit) + " tokens",
        "stride");
  std::vector<TokenClassificationText> out;
  out.reserve(texts.size());
  for (auto& text : texts) {
    TokenClassificationText entry;
    entry.first_item = request.items.size();
    if (params.stride) {
      tokenizer::Encoding full = service.tokenize(model.name, text, std::nullopt, true);
      const std::size_t room_left = max_client_batch_size > request.items.size()
                                        ? max_client_batch_size - request.items.size()
                                        : 0;
      if (full.ids.size() > limit)
        entry.windows = windows_of(full, limit, *params.stride, room_left);
    }
    if (entry.windows.empty()) {
      runtime::InferenceItem item;
      item.text = text;
      request.items.push_back(std::move(item));
    } else {
      for (const auto& window : entry.windows) {
        runtime::InferenceItem item;
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
                                              const runtime::InferenceResult& result,
                                              const runtime::ModelDescription& model,
                                              const TokenClassificationParameters& params) {
  const auto extract = [&](const runtime::ItemOutput& item, const tokenizer::Encoding& enc) {
    const model::heads::TokenizedSequence sequence{
        text.text, item.values, enc.ids, enc.tokens, enc.offsets, enc.special_tokens_mask};
    return model::heads::extract_entities(sequence, model.info.id2label, item.token_style,
                                          params.aggregation, params.ignore_labels);
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

void write_entities(JsonWriter& json, const std::vector<model::heads::Entity>& entities) {
  json.begin_array();
  for (const auto& e : entities) {
    json.begin_object();
    json.key(e.index ? "entity" : "entity_group").value(e.label);
    json.key("score").value(e.score);
    if (e.index) json.key("index").value(*e.index);
    json.key("word").value(e.word);
    json.key("start").value(e.start);
    json.key("end").value(e.end);
    json.end_object();
  }
  json.end_array();
}

}  // namespace onepass::api
