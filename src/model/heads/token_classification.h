// Entities from a token classifier's logits, as transformers v4.47.1's token-classification
// pipeline (pipelines/token_classification.py, TokenClassificationPipeline.postprocess) makes
// them with a fast tokenizer: softmax per token, special tokens skipped, optional word
// aggregation (first / average / max), B-/I- grouping, then ignore_labels. Its quirks are kept:
//   - a token is a sub-word when the tokenizer has a continuing_subword_prefix ("##") and the
//     token's text is longer or shorter than the text its offsets cover; otherwise (SentencePiece
//     and most BPE) when the character before it and its first character hold no ASCII space;
//   - an unknown token's word is the text it covers, and it always starts a word;
//   - ties: the first label (numpy argmax), the first token of a word (`max`);
//   - a group's label is the first member's label after its first "-"; groups merge a token
//     whose tag equals the previous one unless it is a B- tag (a label without B-/I- counts as I-).
// Pure functions: the API layer and `onepass run` both reach them.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace onepass::model::heads {

enum class Aggregation { kNone, kSimple, kFirst, kAverage, kMax };

// "none", "simple", "first", "average", "max" (case-insensitive, as the pipeline upper-cases
// the name); nullopt for anything else.
std::optional<Aggregation> aggregation_from_name(std::string_view name);

// How the tokenizer's tokens read back as text (convert_tokens_to_string of the fast tokenizer).
struct TokenTextStyle {
  // WordPiece's "##": tokens join with a space unless they carry it (then it is dropped), and
  // transformers' clean_up_tokenization runs on the result. Empty: no prefix.
  std::string continuing_subword_prefix;
  // SentencePiece's Metaspace decoder: "▁" becomes a space and the first token loses its
  // leading one; tokens are concatenated. Used when continuing_subword_prefix is empty.
  bool metaspace = false;
  std::optional<std::int32_t> unk_token_id;
  // The ByteLevel decoder (GPT-2, RoBERTa; wins over `metaspace`): a token made only of
  // bytes_to_unicode's stand-ins becomes those bytes, any other token (a word the pipeline
  // already read back, holding a real space) its own UTF-8; the bytes of all the tokens then
  // read as UTF-8 with each invalid sequence one U+FFFD (Rust's from_utf8_lossy). So "ĠParis"
  // reads " Paris", and `first`/`average`/`max` groups, which the pipeline reads back twice,
  // can turn a word's non-ASCII letters into U+FFFD as it does.
  bool byte_level = false;
};

// One text's tokens (special ones included) with the classifier's logits.
struct TokenizedSequence {
  std::string_view text;                // UTF-8, as the client sent it
  std::span<const float> logits;        // [tokens, num_labels]
  std::span<const std::int32_t> ids;    // [tokens]
  std::span<const std::string> tokens;  // vocabulary strings ("##ay", "▁man")
  std::span<const std::pair<std::uint32_t, std::uint32_t>> offsets;  // code points of `text`
  std::span<const std::uint8_t> special;  // 1: added by the post-processor, skipped
};

struct Entity {
  std::string label;  // "entity" (none) or "entity_group" (the others)
  float score = 0.0f;
  std::optional<std::size_t> index;  // token index, special tokens counted; `none` only
  std::string word;
  std::size_t start = 0;  // code points of the text, [start, end)
  std::size_t end = 0;
};

// Throws onepass::Error(kInvalidInput) when the spans disagree in length.
std::vector<Entity> extract_entities(const TokenizedSequence& sequence,
                                     const std::vector<std::string>& id2label,
                                     const TokenTextStyle& style, Aggregation aggregation,
                                     const std::vector<std::string>& ignore_labels);

// The pipeline's aggregate_overlapping_entities, for the entities of a text's windows (`stride`):
// sorted by start (stable), an entity starting inside the one kept before it replaces it when it
// is longer, or as long with a higher score; otherwise the kept one is final. The pipeline calls
// it only when the text had more than one window.
std::vector<Entity> merge_overlapping_entities(std::vector<Entity> entities);

// convert_tokens_to_string of the fast tokenizer with `style` (exposed for tests).
std::string tokens_to_text(std::span<const std::string> tokens, const TokenTextStyle& style);

}  // namespace onepass::model::heads
