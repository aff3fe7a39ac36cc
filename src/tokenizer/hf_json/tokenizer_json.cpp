// The tokenizer.json tokenizer: added tokens -> normalizer -> pre-tokenizer -> model ->
// truncation -> post-processor, giving the ids of Hugging Face's `tokenizers` library (the
// fast tokenizer). JSON is parsed here, at the edge, into the component objects.
#include "tokenizer/hf_json/tokenizer_json.h"

#include <fstream>
#include <sstream>
#include <string>

#include "base/error.h"
#include "base/read_file.h"
#include "tokenizer/common/unicode.h"
#include "tokenizer/hf_json/added_vocabulary.h"
#include "tokenizer/hf_json/decoders.h"
#include "tokenizer/hf_json/model.h"
#include "tokenizer/hf_json/normalizers.h"
#include "tokenizer/hf_json/post_processors.h"
#include "tokenizer/hf_json/pre_tokenizers.h"
#include "tokenizer/hf_json/truncation.h"
#include "tokenizer/sources.h"

namespace onepass::tokenizer {
namespace hf_json {
namespace {

class TokenizerJson final : public Tokenizer {
 public:
  TokenizerJson(const Json& root, std::string_view source_kind) : source_kind_(source_kind) {
    if (!root.is_object())
      throw Error(ErrorKind::kInvalidModel, "tokenizer.json: not a JSON object");
    if (root.contains("normalizer") && !root.at("normalizer").is_null())
      normalizer_ = make_normalizer(root.at("normalizer"));
    if (root.contains("pre_tokenizer") && !root.at("pre_tokenizer").is_null())
      pre_tokenizer_ = make_pre_tokenizer(root.at("pre_tokenizer"));
    model_ = make_model(require(root, "tokenizer.json", "model"));
    if (root.contains("post_processor") && !root.at("post_processor").is_null())
      post_processor_ = make_post_processor(root.at("post_processor"));
    if (root.contains("added_tokens"))
      added_.load(root.at("added_tokens"), *model_, normalizer_.get());
    if (const auto it = root.find("decoder"); it != root.end() && it->is_object()) {
      decoder_ = make_decoder(*it);
      // The token-classification pipeline reads tokens back as bytes under this decoder.
      byte_level_decoder_ = it->value("type", Json()) == "ByteLevel";
    }
  }

  Encoding encode(std::string_view text, std::optional<std::string_view> pair,
                  const TruncationOptions& truncation, bool add_special_tokens) const override {
    Encoding first = encode_sequence(text, 0);
    std::optional<Encoding> second;
    if (pair) second = encode_sequence(*pair, 1);

    if (truncation.max_length > 0) {
      const std::size_t added = num_special_tokens(second.has_value());
      std::size_t budget = truncation.max_length;
      if (add_special_tokens && added > 0) {
        if (budget < added)
          throw Error(ErrorKind::kInvalidInput,
                      "max_length " + std::to_string(budget) + " is smaller than the " +
                          std::to_string(added) + " special tokens this tokenizer adds");
        budget -= added;
      }
      truncate_encodings(first, second, budget, truncation.strategy, truncation.direction);
    }

    std::vector<Encoding> parts;
    parts.push_back(std::move(first));
    if (second) parts.push_back(std::move(*second));
    if (post_processor_) post_processor_->process(parts, add_special_tokens);
    return merge_encodings(parts);
  }

  std::size_t num_special_tokens(bool pair) const override {
    return post_processor_ ? post_processor_->added_tokens(pair) : 0;
  }

  std::size_t vocab_size() const override {
    std::size_t n = model_->vocab_size();
    if (const auto top = added_.max_id()) n = std::max(n, static_cast<std::size_t>(*top) + 1);
    return n;
  }

  std::optional<std::int32_t> token_to_id(std::string_view token) const override {
    if (const auto id = added_.token_to_id(token)) return id;
    return model_->token_to_id(token);
  }

  // The crate's decode: ids to tokens (added tokens first, then the model; special ones left
  // out when asked), then the decoder, or the tokens joined by spaces without one.
  std::string decode(std::span<const std::int32_t> ids, bool skip_special_tokens) const override {
    std::vector<std::string> tokens;
    tokens.reserve(ids.size());
    for (const std::int32_t id : ids) {
      std::optional<std::string> token;
      if (const AddedToken* added = added_.find(id)) {
        token = added->content;
      } else {
        token = model_->id_to_token(id);
      }
      if (!token) {
        throw Error(ErrorKind::kInvalidInput, "token id " + std::to_string(id) +
                                                  " is outside the vocabulary (size " +
                                                  std::to_string(vocab_size()) + ")");
      }
      if (skip_special_tokens && added_.is_special(*token)) continue;
      tokens.push_back(std::move(*token));
    }
    if (!decoder_) return join_without_decoder(tokens);
    decoder_->decode_chain(tokens);
    std::string text;
    for (const auto& t : tokens) text += t;
    return text;
  }

  std::string_view source_kind() const override { return source_kind_; }
  std::string_view continuing_subword_prefix() const override {
    return model_->continuing_subword_prefix();
  }
  bool byte_level_decoder() const override { return byte_level_decoder_; }

 private:
  Encoding encode_sequence(std::string_view text, std::int32_t type_id) const {
    std::vector<Split> splits =
        added_.extract_and_normalize(normalizer_.get(), unicode::decode_utf8(text));
    if (pre_tokenizer_) pre_tokenizer_->pre_tokenize(splits);
    Encoding e;
    std::vector<Token> tokens;
    // The crate's into_encoding with word_idx None: a token's word is its split's index, splits
    // that tokenize to nothing included.
    for (std::size_t word = 0; word < splits.size(); ++word) {
      Split& split = splits[word];
      if (!split.tokens) {
        tokens.clear();
        model_->tokenize(split.normalized.get(), tokens);
        split.tokens = std::move(tokens);
        tokens = {};
      }
      for (Token& t : *split.tokens) {
        e.ids.push_back(t.id);
        e.type_ids.push_back(type_id);
        e.offsets.push_back(split.normalized.to_original(t.start, t.end));
        e.tokens.push_back(std::move(t.value));
        e.special_tokens_mask.push_back(0);
        e.word_ids.push_back(static_cast<std::int32_t>(word));
      }
    }
    return e;
  }

  std::unique_ptr<Normalizer> normalizer_;
  std::unique_ptr<PreTokenizer> pre_tokenizer_;
  std::unique_ptr<Model> model_;
  std::unique_ptr<PostProcessor> post_processor_;
  AddedVocabulary added_;
  std::unique_ptr<Decoder> decoder_;
  std::string source_kind_;
  bool byte_level_decoder_ = false;
};

}  // namespace

std::unique_ptr<Tokenizer> make_tokenizer_json(const Json& root, std::string_view source_kind) {
  try {
    return std::make_unique<TokenizerJson>(root, source_kind);
  } catch (const Json::exception& e) {
    // Every field is type-checked before use; this is a last guard so that no malformed file
    // escapes as a non-onepass exception.
    throw Error(ErrorKind::kInvalidModel, std::string("tokenizer.json: malformed: ") + e.what());
  }
}

std::unique_ptr<Tokenizer> parse_tokenizer_json(std::string_view json_text,
                                                std::string_view source_kind) {
  Json root = Json::parse(json_text, nullptr, /*allow_exceptions=*/false);
  if (root.is_discarded())
    throw Error(ErrorKind::kInvalidModel, "tokenizer.json is not valid JSON");
  return make_tokenizer_json(root, source_kind);
}

}  // namespace hf_json

std::unique_ptr<Tokenizer> load_tokenizer_json(const std::filesystem::path& tokenizer_json) {
  return hf_json::parse_tokenizer_json(read_file(tokenizer_json, kTokenizerFileLimitBytes));
}

}  // namespace onepass::tokenizer
