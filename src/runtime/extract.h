// Open-label entity extraction (GLiNER) below the dialects: what a request's text becomes
// (GLiNER's words and its prompt "<<ENT>> label ... <<SEP>> words" as one sequence) and how its
// span logits are read back as GLiNER's predict_entities returns them (sigmoid, threshold,
// greedy flat or nested decoding, multi-label). The dialects read and write the JSON
// (api/common/extract.h); the model side is model/architectures/gliner.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "runtime/service.h"
#include "tokenizer/tokenizer.h"

namespace onepass::runtime {

// The most labels one request may name, and the longest label (bytes). GLiNER itself has no
// limit; every label is a prompt of its own in the sequence, so hundreds of them fill the
// model's token limit before the text does.
inline constexpr std::size_t kMaxExtractLabels = 100;
inline constexpr std::size_t kMaxLabelBytes = 200;

// FieldError kInvalid naming the field: no labels ("labels"), more than kMaxExtractLabels, an
// empty or over-long label, a label holding the model's <<ENT>> / <<SEP>> token, a threshold
// outside [0, 1] ("threshold").
void check_extract_options(const ExtractOptions& options, const ModelDescription& model);

// The labels in request order, each once (predict_entities' dict.fromkeys).
std::vector<std::string> unique_labels(const std::vector<std::string>& labels);

// GLiNER's WhitespaceTokenSplitter: the matches of Python's re `\w+(?:[-_]\w+)*|\S` over the
// text (`\w`: str.isalnum() or "_"; `\S`: not str.isspace()), as [begin, end) code points and
// bytes. Throws kInvalidInput for invalid UTF-8.
struct TextWord {
  std::uint32_t start = 0, end = 0;  // code points
  std::size_t byte_begin = 0, byte_end = 0;
};
std::vector<TextWord> split_words(std::string_view text);

// One text's sequence: [prefix specials] (<<ENT>> label)* <<SEP>> words [suffix specials], the
// first max_words words only (GLiNER's max_len: the words past it are not looked at).
struct ExtractSequence {
  std::vector<std::int32_t> input_ids;
  std::vector<std::int32_t> word_positions;  // each word's first token
  std::vector<std::pair<std::uint32_t, std::uint32_t>> words;
};
// `tokenize` gives a word's ids without special tokens; `specials` the ids the tokenizer puts
// before and after a text.
struct SpecialTokens {
  std::vector<std::int32_t> before, after;
  std::int32_t entity = -1, separator = -1;
};
// The specials of `tok` around a text (its post-processor's, read off a one-word text) and the
// <<ENT>> / <<SEP>> ids of `span`. Throws kInvalidInput when the tokenizer has no <<SEP>>.
SpecialTokens extract_special_tokens(const tokenizer::Tokenizer& tok,
                                     const model::SpanExtractionInfo& span);
ExtractSequence build_extract_sequence(
    std::string_view text, const std::vector<std::string>& labels, const SpecialTokens& specials,
    std::size_t max_words,
    const std::function<std::vector<std::int32_t>(std::string_view)>& tokenize);

struct ExtractedEntity {
  std::uint32_t start = 0, end = 0;  // code points of the text
  std::string text;
  std::string label;
  float score = 0;
};

// predict_entities' answer for one text from its kSpans output ([words, max_width, labels]
// logits and the words).
std::vector<ExtractedEntity> decode_entities(std::string_view text, const ItemOutput& output,
                                             const ExtractOptions& options, int max_width);

// "long_input": "chunk" (docs/api.md, GLiNER): a text of more than `max_words` words is read in
// windows of `max_words` words, consecutive windows sharing `stride` words (the first starts at
// word 0, each next one max_words - stride words later, the last is the first to reach the
// text's last word). A text that fits is one window. Each window is the text's bytes from its
// first word to its last, which GLiNER's splitter cuts into the same words. Throws FieldError
// kInvalid ("stride") when stride is not below max_words, kInvalidInput for invalid UTF-8.
struct ExtractWindow {
  std::uint32_t start = 0;  // the window's first code point in the text
  std::size_t byte_begin = 0, byte_end = 0;
};
inline std::size_t default_extract_stride(std::size_t max_words) { return max_words / 8; }
std::vector<ExtractWindow> extract_windows(std::string_view text, std::size_t max_words,
                                           std::size_t stride);

// One text's entities from its windows' kSpans outputs (in text order, each with its window's
// first code point): every window's spans over the threshold moved to the text's offsets, a span
// two windows found keeping its higher score, then GLiNER's decoding (greedy, flat or nested,
// multi-label) over them all, as decode_entities decodes one window.
struct WindowSpans {
  const ItemOutput* output = nullptr;
  std::uint32_t start = 0;
};
std::vector<ExtractedEntity> decode_windows(std::string_view text,
                                            const std::vector<WindowSpans>& windows,
                                            const ExtractOptions& options, int max_width);

}  // namespace onepass::runtime
