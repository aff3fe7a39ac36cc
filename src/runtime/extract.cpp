#include "runtime/extract.h"

#include <algorithm>
#include <cmath>
#include <tuple>

#include "runtime/field_error.h"
#include "tokenizer/common/unicode.h"

namespace onepass::runtime {
namespace {

[[noreturn]] void invalid(const std::string& message, const char* field) {
  throw FieldError(FieldProblem::kInvalid, message, field);
}

// Python's \w on str: str.isalnum() (letters L*, numbers N*) or "_".
bool python_word_char(char32_t cp) {
  return cp == U'_' || tokenizer::unicode::is_letter(cp) || tokenizer::unicode::is_number(cp);
}

// A span over the threshold: [start, end) in code points of the whole text. Words never share a
// code point, so these overlap, nest and coincide exactly when the spans' words do.
struct Candidate {
  std::uint32_t start = 0, end = 0;
  std::size_t label = 0;
  float score = 0;
};

// gliner/decoding/utils.py: has_overlapping (flat) and has_overlapping_nested.
bool conflicts(const Candidate& a, const Candidate& b, bool flat_ner, bool multi_label) {
  if (a.start == b.start && a.end == b.end) return !multi_label;
  const bool disjoint = a.start >= b.end || b.start >= a.end;
  if (flat_ner) return !disjoint;
  const bool nested =
      (a.start <= b.start && a.end >= b.end) || (b.start <= a.start && b.end >= a.end);
  return !(disjoint || nested);
}

// torch.where(probs > threshold) over (start, width, label) of one window, in that order.
void collect_candidates(const ItemOutput& output, std::uint32_t offset, std::size_t width,
                        std::size_t classes, float threshold, std::vector<Candidate>& out) {
  const std::size_t words = output.words.size();
  ONEPASS_CHECK(output.values.size() == words * width * classes,
                "span logits are [words, max_width, labels]");
  for (std::size_t i = 0; i < words; ++i) {
    for (std::size_t k = 0; k < width && i + k < words; ++k) {
      for (std::size_t c = 0; c < classes; ++c) {
        const float logit = output.values[(i * width + k) * classes + c];
        const float score = 1.0f / (1.0f + std::exp(-logit));
        if (score > threshold)
          out.push_back(Candidate{output.words[i].first + offset,
                                  output.words[i + k].second + offset, c, score});
      }
    }
  }
}

// greedy_search: by score, highest first (a stable sort, as Python's), keeping each span that
// conflicts with none kept before it; then by start (stable again).
std::vector<ExtractedEntity> greedy_decode(std::string_view text, std::vector<Candidate> candidates,
                                           const std::vector<std::string>& labels,
                                           const ExtractOptions& options) {
  std::stable_sort(candidates.begin(), candidates.end(),
                   [](const Candidate& a, const Candidate& b) { return a.score > b.score; });
  std::vector<Candidate> kept;
  for (const Candidate& candidate : candidates) {
    const bool clash = std::any_of(kept.begin(), kept.end(), [&](const Candidate& other) {
      return conflicts(candidate, other, options.flat_ner, options.multi_label);
    });
    if (!clash) kept.push_back(candidate);
  }
  std::stable_sort(kept.begin(), kept.end(),
                   [](const Candidate& a, const Candidate& b) { return a.start < b.start; });
  std::vector<std::uint32_t> bytes;
  tokenizer::unicode::decode_utf8(text, &bytes);
  std::vector<ExtractedEntity> out;
  for (const Candidate& c : kept) {
    ExtractedEntity e;
    e.start = c.start;
    e.end = c.end;
    e.text = std::string(text.substr(bytes[e.start], bytes[e.end] - bytes[e.start]));
    e.label = labels[c.label];
    e.score = c.score;
    out.push_back(std::move(e));
  }
  return out;
}

}  // namespace

void check_extract_options(const ExtractOptions& options, const ModelDescription& model) {
  if (options.labels.empty()) invalid("labels must name at least one entity type", "labels");
  if (options.labels.size() > kMaxExtractLabels)
    invalid("labels has " + std::to_string(options.labels.size()) + " entries, more than " +
                std::to_string(kMaxExtractLabels),
            "labels");
  const auto& span = model.info.span;
  for (const std::string& label : options.labels) {
    if (tokenizer::unicode::python_strip(label).empty()) invalid("a label is empty", "labels");
    if (label.size() > kMaxLabelBytes)
      invalid("a label is longer than " + std::to_string(kMaxLabelBytes) + " bytes", "labels");
    if ((!span.entity_token.empty() && label.find(span.entity_token) != std::string::npos) ||
        (!span.separator_token.empty() && label.find(span.separator_token) != std::string::npos))
      invalid("a label holds the model's prompt tokens (" + span.entity_token + ", " +
                  span.separator_token + ")",
              "labels");
  }
  if (!(options.threshold >= 0.0f && options.threshold <= 1.0f))
    invalid("threshold must be between 0 and 1", "threshold");
}

std::vector<std::string> unique_labels(const std::vector<std::string>& labels) {
  std::vector<std::string> out;
  for (const std::string& label : labels)
    if (std::find(out.begin(), out.end(), label) == out.end()) out.push_back(label);
  return out;
}

std::vector<TextWord> split_words(std::string_view text) {
  std::vector<std::uint32_t> bytes;
  const std::u32string cps = tokenizer::unicode::decode_utf8(text, &bytes);
  std::vector<TextWord> words;
  const std::size_t n = cps.size();
  std::size_t i = 0;
  while (i < n) {
    std::size_t j = i;
    if (python_word_char(cps[i])) {
      while (j < n && python_word_char(cps[j])) ++j;
      // (?:[-_]\w+)*: a joiner counts only with a word character after it.
      while (j + 1 < n && (cps[j] == U'-' || cps[j] == U'_') && python_word_char(cps[j + 1])) {
        ++j;
        while (j < n && python_word_char(cps[j])) ++j;
      }
    } else if (!tokenizer::unicode::is_python_space(cps[i])) {
      j = i + 1;
    } else {
      ++i;
      continue;
    }
    words.push_back(
        TextWord{static_cast<std::uint32_t>(i), static_cast<std::uint32_t>(j), bytes[i], bytes[j]});
    i = j;
  }
  return words;
}

SpecialTokens extract_special_tokens(const tokenizer::Tokenizer& tok,
                                     const model::SpanExtractionInfo& span) {
  SpecialTokens specials;
  specials.entity = span.entity_token_id;
  const auto separator = tok.token_to_id(span.separator_token);
  if (!separator)
    throw Error(ErrorKind::kInvalidInput, "the tokenizer has no " + span.separator_token);
  specials.separator = *separator;
  const tokenizer::Encoding probe = tok.encode("a", std::nullopt, {}, true);
  std::size_t first = 0;
  while (first < probe.size() && probe.special_tokens_mask[first] != 0) ++first;
  std::size_t last = first;
  while (last < probe.size() && probe.special_tokens_mask[last] == 0) ++last;
  specials.before.assign(probe.ids.begin(), probe.ids.begin() + static_cast<std::ptrdiff_t>(first));
  specials.after.assign(probe.ids.begin() + static_cast<std::ptrdiff_t>(last), probe.ids.end());
  return specials;
}

ExtractSequence build_extract_sequence(
    std::string_view text, const std::vector<std::string>& labels, const SpecialTokens& specials,
    std::size_t max_words,
    const std::function<std::vector<std::int32_t>(std::string_view)>& tokenize) {
  ExtractSequence out;
  out.input_ids = specials.before;
  // The prompt: each label after <<ENT>>, as one pre-split word each (is_split_into_words).
  for (const std::string& label : labels) {
    out.input_ids.push_back(specials.entity);
    const auto ids = tokenize(label);
    out.input_ids.insert(out.input_ids.end(), ids.begin(), ids.end());
  }
  out.input_ids.push_back(specials.separator);
  std::vector<TextWord> words = split_words(text);
  if (words.size() > max_words) words.resize(max_words);
  for (const TextWord& word : words) {
    const auto ids = tokenize(text.substr(word.byte_begin, word.byte_end - word.byte_begin));
    // A word the tokenizer gives no token would shift GLiNER's word indices; every
    // SentencePiece and WordPiece tokenizer gives a word at least one (its unknown token).
    if (ids.empty()) throw Error(ErrorKind::kInvalidInput, "a word of the text has no tokens");
    out.word_positions.push_back(static_cast<std::int32_t>(out.input_ids.size()));
    out.input_ids.insert(out.input_ids.end(), ids.begin(), ids.end());
    out.words.emplace_back(word.start, word.end);
  }
  out.input_ids.insert(out.input_ids.end(), specials.after.begin(), specials.after.end());
  return out;
}

std::vector<ExtractedEntity> decode_entities(std::string_view text, const ItemOutput& output,
                                             const ExtractOptions& options, int max_width) {
  return decode_windows(text, {WindowSpans{&output, 0}}, options, max_width);
}

std::vector<ExtractWindow> extract_windows(std::string_view text, std::size_t max_words,
                                           std::size_t stride) {
  if (stride >= max_words)
    invalid("stride must be below the model's max_len (" + std::to_string(max_words) + " words)",
            "stride");
  const std::vector<TextWord> words = split_words(text);
  if (words.size() <= max_words) return {ExtractWindow{0, 0, text.size()}};
  std::vector<ExtractWindow> out;
  for (std::size_t first = 0;; first += max_words - stride) {
    const std::size_t last = std::min(first + max_words, words.size()) - 1;
    out.push_back(ExtractWindow{words[first].start, words[first].byte_begin, words[last].byte_end});
    if (last + 1 == words.size()) return out;
  }
}

std::vector<ExtractedEntity> decode_windows(std::string_view text,
                                            const std::vector<WindowSpans>& windows,
                                            const ExtractOptions& options, int max_width) {
  const std::vector<std::string> labels = unique_labels(options.labels);
  std::vector<Candidate> candidates;
  for (const WindowSpans& window : windows)
    collect_candidates(*window.output, window.start, static_cast<std::size_t>(max_width),
                       labels.size(), options.threshold, candidates);
  if (windows.size() > 1) {
    // The windows' candidates as one text's: in (start, end, label) order, which is one
    // window's order, a span two windows found once with its higher score.
    std::stable_sort(candidates.begin(), candidates.end(),
                     [](const Candidate& a, const Candidate& b) {
                       return std::tie(a.start, a.end, a.label) < std::tie(b.start, b.end, b.label);
                     });
    std::vector<Candidate> merged;
    for (const Candidate& c : candidates) {
      if (!merged.empty() && merged.back().start == c.start && merged.back().end == c.end &&
          merged.back().label == c.label) {
        merged.back().score = std::max(merged.back().score, c.score);
      } else {
        merged.push_back(c);
      }
    }
    candidates = std::move(merged);
  }
  return greedy_decode(text, std::move(candidates), labels, options);
}

}  // namespace onepass::runtime
