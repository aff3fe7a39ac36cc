// A FakeService's answers (fake_outputs.h).
#include "api/fuzz/fake_outputs.h"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <string>

#include "api/fuzz/fake_tokenizer.h"
#include "base/error.h"
#include "runtime/extract.h"
#include "runtime/finish_outputs.h"

namespace onepass::api::fuzzing {
namespace {

std::uint64_t fnv(std::string_view text, std::uint64_t h = 1469598103934665603ull) {
  for (const char c : text) {
    h ^= static_cast<unsigned char>(c);
    h *= 1099511628211ull;
  }
  return h;
}

std::uint64_t item_hash(const runtime::InferenceItem& item) {
  if (item.pretokenized) {
    std::uint64_t h = 7;
    for (const auto id : item.input_ids) h = h * 31 + static_cast<std::uint64_t>(id);
    for (const auto t : item.token_type_ids) h = h * 17 + static_cast<std::uint64_t>(t);
    return h;
  }
  std::uint64_t h = fnv(item.text);
  if (item.text_pair) h = fnv(*item.text_pair, h ^ 0x9e3779b97f4a7c15ull);
  return h;
}

// What the runtime's prepare step refuses in ids a client sent.
void check_ids(const runtime::InferenceItem& item, int vocab_size) {
  if (item.input_ids.empty()) throw Error(ErrorKind::kInvalidInput, "input_ids is empty");
  if (!item.token_type_ids.empty() && item.token_type_ids.size() != item.input_ids.size())
    throw Error(ErrorKind::kInvalidInput, "token_type_ids and input_ids differ in length");
  for (const auto id : item.input_ids)
    if (id < 0 || id >= vocab_size)
      throw Error(ErrorKind::kInvalidInput, "token id outside the vocabulary");
}

bool chunks(const runtime::InferenceRequest& request, const runtime::InferenceItem& item) {
  return request.long_input == runtime::LongInput::kChunk && !request.truncate &&
         !item.pretokenized &&
         (request.output == runtime::OutputKind::kLogits ||
          request.output == runtime::OutputKind::kPooled);
}

// A chunked input: the windows runtime/windows.h cuts from `tokens` tokens (the split text's
// share split, the special tokens and the other text in every window), each with values that
// differ by window, and their token-weighted mean, as combine_windows gives.
runtime::ItemOutput chunked(const runtime::InferenceRequest& request,
                            const runtime::InferenceItem& item,
                            const runtime::ModelDescription& model, std::size_t tokens,
                            std::size_t limit) {
  const bool second = item.text_pair && request.chunked_text == runtime::ChunkedText::kSecond;
  const auto split_tokens =
      static_cast<std::size_t>(fake_text_tokens(second ? *item.text_pair : item.text));
  const std::size_t frame = tokens - split_tokens;
  if (frame >= limit) throw Error(ErrorKind::kInvalidInput, "no room for the split text");
  const std::size_t room = limit - frame;
  const std::size_t stride = request.stride.value_or(room / 8);
  if (stride >= room) throw Error(ErrorKind::kInvalidInput, "stride not below the room");
  const int width =
      model.task == runtime::ModelTask::kEmbedder ? model.info.hidden_size : model.info.num_labels;
  runtime::ItemOutput out;
  std::vector<double> sum(static_cast<std::size_t>(width), 0.0);
  for (std::size_t begin = 0;; begin += room - stride) {
    const std::size_t end = std::min(begin + room, split_tokens);
    runtime::WindowOutput window;
    window.num_tokens = static_cast<int>(frame + end - begin);
    for (int j = 0; j < width; ++j) {
      window.values.push_back(static_cast<float>((begin + static_cast<std::size_t>(j) * 5) % 9) -
                              4.0f);
      sum[static_cast<std::size_t>(j)] += window.num_tokens * window.values.back();
    }
    out.num_tokens += window.num_tokens;
    out.windows.push_back(std::move(window));
    if (end >= split_tokens || out.windows.size() == request.max_windows_per_item) break;
  }
  for (const double s : sum) out.values.push_back(static_cast<float>(s / out.num_tokens));
  if (out.windows.size() == 1) out.windows.clear();  // one window is no chunked input
  return out;
}

// A token classifier's or question answerer's output: the fake encoding of a text (truncated
// as the runtime truncates) or the given ids, and [tokens, num_labels] finite logits that vary
// by token and label so that every aggregation has labels to group.
runtime::ItemOutput token_logits(const runtime::InferenceRequest& request,
                                 const runtime::InferenceItem& item,
                                 const runtime::ModelDescription& model, std::size_t limit) {
  runtime::ItemOutput out;
  std::size_t tokens = item.input_ids.size();
  if (!item.pretokenized) {
    out.encoding = fake_encode(item.text, std::nullopt, true);
    tokens = out.encoding.ids.size();
  }
  if (tokens > limit) {
    if (!request.truncate) throw Error(ErrorKind::kInvalidInput, "input has too many tokens");
    tokens = limit;
    auto& e = out.encoding;
    if (!item.pretokenized) {
      e.ids.resize(tokens);
      e.type_ids.resize(tokens);
      e.tokens.resize(tokens);
      e.offsets.resize(tokens);
      e.special_tokens_mask.resize(tokens);
      e.word_ids.resize(tokens);
    }
  }
  out.num_tokens = static_cast<int>(tokens);
  for (std::size_t t = 0; t < tokens; ++t)
    for (int j = 0; j < model.info.num_labels; ++j)
      out.values.push_back(static_cast<float>((t * 7 + static_cast<std::size_t>(j) * 3) % 11) *
                           0.5f);
  out.token_style.continuing_subword_prefix = "##";
  out.token_style.unk_token_id = 3;
  return out;
}

// The runtime's fill-mask rules: a "[MASK]" word per mask, none is refused; top_k predictions
// (at most the targets) per mask.
void fill_mask(const runtime::InferenceRequest& request, const runtime::InferenceItem& item,
               int vocab_size, runtime::ItemOutput& out) {
  std::size_t masks = 0;
  for (std::size_t at = item.text.find("[MASK]"); at != std::string::npos;
       at = item.text.find("[MASK]", at + 1))
    ++masks;
  if (masks == 0) throw Error(ErrorKind::kInvalidInput, "No mask_token ([MASK]) found");
  std::size_t k = request.fill_mask.top_k;
  if (!request.fill_mask.targets.empty()) k = std::min(k, request.fill_mask.targets.size());
  k = std::min(k, static_cast<std::size_t>(vocab_size));
  out.predictions.assign(masks, {});
  for (auto& per_mask : out.predictions)
    for (std::size_t r = 0; r < k; ++r)
      per_mask.push_back({1.0f / static_cast<float>(r + 2), static_cast<std::int32_t>(r),
                          std::to_string(r), item.text});
}

// A span extractor's output: the text's words as the runtime splits them (the first max_words),
// and [words, max_width, labels] logits around 0 that vary by span and label, so that the
// decoder keeps some spans and drops others.
runtime::ItemOutput spans(const runtime::InferenceRequest& request,
                          const runtime::InferenceItem& item,
                          const runtime::ModelDescription& model, std::size_t limit) {
  runtime::ItemOutput out;
  auto words = runtime::split_words(item.text);
  const auto max_words = static_cast<std::size_t>(model.info.span.max_words);
  if (words.size() > max_words) words.resize(max_words);
  const std::size_t labels = runtime::unique_labels(request.extract.labels).size();
  const std::size_t tokens = 3 + 2 * labels + words.size();
  if (tokens > limit) throw Error(ErrorKind::kInvalidInput, "input has too many tokens");
  out.num_tokens = static_cast<int>(tokens);
  const auto width = static_cast<std::size_t>(model.info.span.max_width);
  for (const auto& w : words) out.words.emplace_back(w.start, w.end);
  for (std::size_t i = 0; i < words.size() * width * labels; ++i)
    out.values.push_back(static_cast<float>((i * 7) % 9) - 4.0f);
  return out;
}

}  // namespace

std::vector<float> fake_logits(const runtime::InferenceItem& item, int count) {
  const std::uint64_t h = item_hash(item);
  std::vector<float> out(static_cast<std::size_t>(count));
  for (int j = 0; j < count; ++j)
    out[j] = static_cast<float>(static_cast<int>((h >> (8 * (j % 8))) & 0xff) - 128) / 32.0f;
  return out;
}

std::vector<float> fake_pooled(const runtime::InferenceItem& item, int hidden_size) {
  auto v = fake_logits(item, hidden_size);
  for (auto& x : v) x += 0.25f;  // never all zero
  return v;
}

runtime::InferenceResult fake_result(const runtime::InferenceRequest& request,
                                     const runtime::ModelDescription& model, bool nan_marker) {
  runtime::InferenceResult result;
  const auto max_tokens = static_cast<std::size_t>(model.max_input_length);
  const std::size_t limit =
      request.max_length ? std::min<std::size_t>(request.max_length, max_tokens) : max_tokens;
  try {
    for (const auto& item : request.items) {
      if (nan_marker && item.text == kNanMarker) {
        runtime::ItemOutput out;
        out.values = {std::numeric_limits<float>::quiet_NaN(), 0, 0};
        result.items.push_back(out);
        continue;
      }
      if (item.pretokenized) check_ids(item, model.info.vocab_size);
      if (request.output == runtime::OutputKind::kSpans) {
        result.items.push_back(spans(request, item, model, limit));
        result.total_tokens += static_cast<std::size_t>(result.items.back().num_tokens);
        continue;
      }
      if (request.output == runtime::OutputKind::kTokenLogits) {
        result.items.push_back(token_logits(request, item, model, limit));
        result.total_tokens += static_cast<std::size_t>(result.items.back().num_tokens);
        continue;
      }
      auto tokens = static_cast<std::size_t>(fake_token_count(item));
      if (tokens > limit && chunks(request, item)) {
        result.items.push_back(chunked(request, item, model, tokens, limit));
        result.total_tokens += static_cast<std::size_t>(result.items.back().num_tokens);
        continue;
      }
      if (tokens > limit) {
        if (!request.truncate)
          throw Error(ErrorKind::kInvalidInput, "input has " + std::to_string(tokens) +
                                                    " tokens, more than the model's limit of " +
                                                    std::to_string(limit));
        tokens = limit;
      }
      runtime::ItemOutput out;
      out.num_tokens = static_cast<int>(tokens);
      if (request.output == runtime::OutputKind::kFillMask) {
        fill_mask(request, item, model.info.vocab_size, out);
      } else if (model.task == runtime::ModelTask::kMaskedLm) {
        // Mostly 0, as a SPLADE vector is.
        out.values.assign(static_cast<std::size_t>(model.info.vocab_size), 0.0f);
        out.values[tokens % out.values.size()] = 1.0f + static_cast<float>(item.text.size() % 7);
      } else if (model.task == runtime::ModelTask::kEmbedder) {
        const auto v = fake_pooled(item, model.info.hidden_size);
        const int rows = request.output == runtime::OutputKind::kTokens ? out.num_tokens : 1;
        for (int t = 0; t < rows; ++t)
          for (const float x : v) out.values.push_back(x + static_cast<float>(t));
      } else {
        out.values = fake_logits(item, model.info.num_labels);
      }
      result.total_tokens += tokens;
      result.items.push_back(std::move(out));
    }
    runtime::finish_outputs(request, result.items);  // as the runtime's scheduler does
  } catch (...) {
    result.items.clear();
    result.error = std::current_exception();
  }
  return result;
}

}  // namespace onepass::api::fuzzing
