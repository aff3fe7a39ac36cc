// The tokenizer interface every front end uses: text (and an optional pair) in, model ids out.
// Three sources implement it: Hugging Face tokenizer.json (ids of the `tokenizers` library, the
// fast tokenizer), a SentencePiece model and a WordPiece vocab.txt (ids of transformers' slow
// tokenizers). Implementations are immutable after load and encode() is thread-safe.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace onepass::tokenizer {

enum class TruncationStrategy { kLongestFirst, kOnlyFirst, kOnlySecond };
enum class TruncationDirection { kRight, kLeft };

struct TruncationOptions {
  // Maximum number of ids including the special tokens; 0 means no truncation.
  std::size_t max_length = 0;
  TruncationStrategy strategy = TruncationStrategy::kLongestFirst;
  TruncationDirection direction = TruncationDirection::kRight;
};

struct Encoding {
  std::vector<std::int32_t> ids;
  std::vector<std::int32_t> type_ids;
  std::vector<std::string> tokens;
  // [start, end) in Unicode code points of the text the token came from (the pair's second text
  // counts from 0); tokens added by the post-processor get {0, 0}.
  std::vector<std::pair<std::uint32_t, std::uint32_t>> offsets;
  std::vector<std::uint8_t> special_tokens_mask;  // 1 for tokens added by the post-processor
  // The word each token came from, as the fast tokenizer's word_ids() gives it: the index of the
  // pre-tokenizer's split within its own text (each text of a pair counts from 0); -1 for tokens
  // added by the post-processor. Tokens of one word are consecutive.
  std::vector<std::int32_t> word_ids;
  std::size_t size() const { return ids.size(); }
};

// Tokens [begin, end) of `from` appended to `to`, every per-token field (overflow windows are
// cut from a whole encoding this way).
inline void append_tokens(Encoding& to, const Encoding& from, std::size_t begin, std::size_t end) {
  for (std::size_t i = begin; i < end; ++i) {
    to.ids.push_back(from.ids[i]);
    to.type_ids.push_back(i < from.type_ids.size() ? from.type_ids[i] : 0);
    to.tokens.push_back(from.tokens[i]);
    to.offsets.push_back(from.offsets[i]);
    to.special_tokens_mask.push_back(from.special_tokens_mask[i]);
    to.word_ids.push_back(i < from.word_ids.size() ? from.word_ids[i] : -1);
  }
}

class Tokenizer {
 public:
  virtual ~Tokenizer() = default;

  // Throws onepass::Error(kInvalidInput) for invalid UTF-8 and for a truncation request that
  // cannot be met (e.g. only_second when the second text is too short).
  virtual Encoding encode(std::string_view text, std::optional<std::string_view> pair,
                          const TruncationOptions& truncation = {},
                          bool add_special_tokens = true) const = 0;

  // Number of ids the post-processor adds around one text or a pair.
  virtual std::size_t num_special_tokens(bool pair) const = 0;
  virtual std::size_t vocab_size() const = 0;
  virtual std::optional<std::int32_t> token_to_id(std::string_view token) const = 0;
  // transformers' decode of `ids` before its clean_up_tokenization_spaces step (decoding.h adds
  // that step where the folder asks for it): a tokenizer.json through its decoder, as the
  // `tokenizers` library decodes; a slow tokenizer as its class's convert_ids_to_tokens and
  // convert_tokens_to_string. skip_special_tokens leaves the special tokens out. Throws
  // onepass::Error: kInvalidInput for an id outside the vocabulary, kUnsupported for a
  // tokenizer.json decoder onepass lacks.
  virtual std::string decode(std::span<const std::int32_t> ids, bool skip_special_tokens) const = 0;
  // What transformers' decode makes of an id past this tokenizer's vocabulary, which a model
  // whose embedding has padded rows can predict (mDeBERTa-v3-base: 251,000 rows for 250,102
  // ids): a slow tokenizer's convert_ids_to_tokens gives its unk token (BertTokenizer,
  // DebertaV2Tokenizer), the tokenizers library leaves the id out. The id to decode in its
  // place; nullopt: leave it out.
  virtual std::optional<std::int32_t> stand_in_for_id_past_vocabulary() const {
    return std::nullopt;
  }
  // Short name of the source: "tokenizer.json", "sentencepiece", "wordpiece" or "bpe_files"
  // (vocab.json + merges.txt).
  virtual std::string_view source_kind() const = 0;
  // The model's continuing_subword_prefix ("##" for WordPiece; a BPE may set one); empty when
  // it has none (Unigram, SentencePiece). The token-classification pipeline finds word
  // boundaries with it.
  virtual std::string_view continuing_subword_prefix() const { return {}; }
  // True when tokenizer.json's decoder is ByteLevel (GPT-2, RoBERTa): tokens are byte stand-ins
  // ("Ġ" for a space) that the fast tokenizer's convert_tokens_to_string reads back as bytes.
  virtual bool byte_level_decoder() const { return false; }
};

// Loads a model folder's tokenizer: tokenizer.json when present, else the SentencePiece model
// (spm.model, sentencepiece.bpe.model) with tokenizer_config.json / special_tokens_map.json,
// else vocab.txt. `file` picks one source explicitly. Throws onepass::Error (kNotFound when the
// folder has no tokenizer, kUnsupported naming a component onepass lacks).
std::unique_ptr<Tokenizer> load_tokenizer(const std::filesystem::path& model_dir,
                                          const std::optional<std::filesystem::path>& file = {});

}  // namespace onepass::tokenizer
