#include "tokenizer/slow/slow_tokenizer.h"

#include <algorithm>

#include "base/error.h"
#include "tokenizer/common/unicode.h"

namespace onepass::tokenizer::slow {
namespace {

const char* strategy_name(TruncationStrategy strategy) {
  switch (strategy) {
    case TruncationStrategy::kLongestFirst:
      return "longest_first";
    case TruncationStrategy::kOnlyFirst:
      return "only_first";
    case TruncationStrategy::kOnlySecond:
      return "only_second";
  }
  return "?";
}

void drop(Segment& segment, std::size_t count, TruncationDirection direction) {
  count = std::min(count, segment.size());
  if (direction == TruncationDirection::kRight) {
    segment.resize(segment.size() - count);
  } else {
    const auto n = static_cast<long>(count);
    segment.ids.erase(segment.ids.begin(), segment.ids.begin() + n);
    segment.tokens.erase(segment.tokens.begin(), segment.tokens.begin() + n);
    segment.offsets.erase(segment.offsets.begin(), segment.offsets.begin() + n);
    segment.word_ids.erase(segment.word_ids.begin(), segment.word_ids.begin() + n);
  }
}

// PreTrainedTokenizerBase.truncate_sequences (stride 0). Where Python only logs an error and
// returns the sequences untouched, this throws, as the Tokenizer interface promises.
void truncate(Segment& first, Segment* second, std::size_t remove,
              const TruncationOptions& options) {
  auto impossible = [&](const char* which, std::size_t have) {
    throw Error(ErrorKind::kInvalidInput,
                "cannot truncate to max_length " + std::to_string(options.max_length) + " with " +
                    strategy_name(options.strategy) + ": " + std::to_string(remove) +
                    " tokens must go but the " + which + " has " + std::to_string(have));
  };
  const auto strategy = options.strategy;
  if (strategy == TruncationStrategy::kOnlyFirst ||
      (strategy == TruncationStrategy::kLongestFirst && second == nullptr)) {
    if (first.size() <= remove) impossible("first text", first.size());
    drop(first, remove, options.direction);
  } else if (strategy == TruncationStrategy::kLongestFirst) {
    if (first.size() + second->size() < remove) {
      impossible("two texts together", first.size() + second->size());
    }
    // One token at a time from the longer text; on a tie from the second.
    std::size_t from_first = 0;
    std::size_t from_second = 0;
    for (std::size_t k = 0; k < remove; ++k) {
      if (first.size() - from_first > second->size() - from_second) {
        ++from_first;
      } else {
        ++from_second;
      }
    }
    drop(first, from_first, options.direction);
    drop(*second, from_second, options.direction);
  } else {
    if (second == nullptr) {
      throw Error(ErrorKind::kInvalidInput, "truncation only_second needs a text pair");
    }
    if (second->size() <= remove) impossible("second text", second->size());
    drop(*second, remove, options.direction);
  }
}

void append(Encoding& out, const Segment& segment, std::int32_t type_id) {
  out.ids.insert(out.ids.end(), segment.ids.begin(), segment.ids.end());
  out.tokens.insert(out.tokens.end(), segment.tokens.begin(), segment.tokens.end());
  out.offsets.insert(out.offsets.end(), segment.offsets.begin(), segment.offsets.end());
  out.type_ids.insert(out.type_ids.end(), segment.size(), type_id);
  out.special_tokens_mask.insert(out.special_tokens_mask.end(), segment.size(), 0);
  out.word_ids.insert(out.word_ids.end(), segment.word_ids.begin(), segment.word_ids.end());
}

}  // namespace

void SlowTokenizer::init(SlowConfig config, const SpecialLayout& layout,
                         std::size_t base_vocab_size, bool lowercase_text) {
  config_ = std::move(config);
  layout_ = layout;
  lowercase_text_ = lowercase_text;
  finalize_added_tokens(
      config_, [this](std::string_view token) { return base_token_to_id(token); },
      static_cast<std::int32_t>(base_vocab_size));
  vocab_size_ = base_vocab_size;
  for (const auto& token : config_.added_tokens) {
    added_ids_[token.content] = token.id;  // a later (higher) id wins, as in the Python dict
    vocab_size_ = std::max(vocab_size_, static_cast<std::size_t>(token.id) + 1);
  }
  splitter_.emplace(config_.added_tokens);

  auto required = [this](const std::optional<std::string>& token, const char* what) {
    if (!token) throw Error(ErrorKind::kInvalidModel, std::string("the tokenizer has no ") + what);
    const auto id = token_to_id(*token);
    if (!id) {
      throw Error(ErrorKind::kInvalidModel,
                  std::string("the ") + what + " \"" + *token + "\" is not in the vocabulary");
    }
    return *id;
  };
  cls_id_ = required(config_.cls_token, "cls_token");
  sep_id_ = required(config_.sep_token, "sep_token");
  cls_token_ = *config_.cls_token;
  sep_token_ = *config_.sep_token;
  unk_id_ = required(config_.unk_token, "unk_token");

  // tokenize() keeps the special tokens and the normalized non-special added tokens as written.
  for (const auto& token : config_.all_special_tokens()) {
    keep_case_.push_back(unicode::decode_utf8(token));
  }
  for (const auto& token : config_.added_tokens) {
    if (!token.special && token.normalized)
      keep_case_.push_back(unicode::decode_utf8(token.content));
  }

  for (const auto& token : config_.added_tokens) added_by_id_[token.id] = token.content;
  for (const auto& token : config_.all_special_tokens()) {
    special_tokens_.insert(token);
    special_ids_.insert(token_to_id(token).value_or(unk_id_));
  }
  // _decode's legacy_added_tokens: added tokens that are not special, and additional special
  // tokens beyond the base vocabulary.
  for (const auto& token : config_.added_tokens) {
    if (!special_tokens_.contains(token.content)) legacy_added_.insert(token.content);
  }
  for (const auto& token : config_.additional_special_tokens) {
    if (token_to_id(token).value_or(unk_id_) >= static_cast<std::int32_t>(base_vocab_size))
      legacy_added_.insert(token);
  }
}

bool SlowTokenizer::is_special_token(std::string_view token) const {
  return special_tokens_.contains(token);
}

std::string SlowTokenizer::decode(std::span<const std::int32_t> ids,
                                  bool skip_special_tokens) const {
  std::vector<std::string> sub_texts;
  std::vector<std::string> current;
  const auto flush = [&](bool keep_empty) {
    if (current.empty()) return;
    std::string text = convert_tokens_to_string(current);
    if (keep_empty || !text.empty()) sub_texts.push_back(std::move(text));
    current.clear();
  };
  for (const std::int32_t id : ids) {
    if (id < 0 || static_cast<std::size_t>(id) >= vocab_size_) {
      throw Error(ErrorKind::kInvalidInput, "token id " + std::to_string(id) +
                                                " is outside the vocabulary (size " +
                                                std::to_string(vocab_size_) + ")");
    }
    if (skip_special_tokens && special_ids_.contains(id)) continue;
    const auto added = added_by_id_.find(id);
    std::string token = added != added_by_id_.end() ? added->second : base_id_to_token(id);
    if (legacy_added_.contains(token)) {
      flush(false);
      sub_texts.push_back(std::move(token));
    } else {
      current.push_back(std::move(token));
    }
  }
  flush(true);
  std::string text;
  for (std::size_t i = 0; i < sub_texts.size(); ++i) {
    if (i != 0) text.push_back(' ');  // spaces_between_special_tokens
    text += sub_texts[i];
  }
  return text;
}

std::optional<std::int32_t> SlowTokenizer::added_token_id(std::string_view content) const {
  const auto it = added_ids_.find(content);
  if (it == added_ids_.end()) return std::nullopt;
  return it->second;
}

std::optional<std::int32_t> SlowTokenizer::token_to_id(std::string_view token) const {
  if (auto id = added_token_id(token)) return id;
  return base_token_to_id(token);
}

std::size_t SlowTokenizer::vocab_size() const { return vocab_size_; }

std::size_t SlowTokenizer::num_special_tokens(bool pair) const {
  if (!pair) return 2;
  return layout_.double_sep_in_pair ? 4 : 3;
}

// The regex `(special|...)|(.+?)` of PreTrainedTokenizer.tokenize: the listed tokens stay as
// they are, every other character except "\n" (which `.` does not match) is lowercased alone, so
// no final-sigma context applies.
std::u32string SlowTokenizer::lowercase_except_special(std::u32string_view text,
                                                       std::vector<std::uint32_t>& source) const {
  std::u32string out;
  out.reserve(text.size());
  source.clear();
  std::size_t i = 0;
  while (i < text.size()) {
    const auto kept = std::find_if(keep_case_.begin(), keep_case_.end(), [&](const auto& token) {
      return !token.empty() && text.substr(i, token.size()) == token;
    });
    if (kept != keep_case_.end()) {
      for (std::size_t k = 0; k < kept->size(); ++k) {
        out.push_back(text[i + k]);
        source.push_back(static_cast<std::uint32_t>(i + k));
      }
      i += kept->size();
      continue;
    }
    const std::u32string lowered =
        text[i] == U'\n' ? std::u32string(1, U'\n') : unicode::lowercase(text.substr(i, 1), false);
    out += lowered;
    source.insert(source.end(), lowered.size(), static_cast<std::uint32_t>(i));
    ++i;
  }
  return out;
}

Segment SlowTokenizer::tokenize(std::string_view text) const {
  const std::u32string decoded = unicode::decode_utf8(text);  // throws kInvalidInput
  std::u32string lowered;
  std::vector<std::uint32_t> lowered_source;
  std::u32string_view view = decoded;
  if (lowercase_text_) {
    lowered = lowercase_except_special(decoded, lowered_source);
    view = lowered;
  }
  Segment segment;
  for (TextPiece& piece : splitter_->split(view)) {
    if (lowercase_text_) {
      for (auto& index : piece.source) index = lowered_source[index];
    }
    // The fast tokenizer splits the added tokens out first: each is a word of its own, and no
    // word runs across one.
    segment.end_word();
    if (piece.added >= 0) {
      const AddedTokenSpec& token = splitter_->tokens()[static_cast<std::size_t>(piece.added)];
      const auto [lo, hi] = std::minmax_element(piece.source.begin(), piece.source.end());
      segment.push(added_ids_.find(token.content)->second, token.content, *lo, *hi + 1);
      segment.end_word();
    } else {
      tokenize_piece(piece, segment);
    }
  }
  return segment;
}

Encoding SlowTokenizer::encode(std::string_view text, std::optional<std::string_view> pair,
                               const TruncationOptions& truncation, bool add_special_tokens) const {
  Segment first = tokenize(text);
  std::optional<Segment> second;
  if (pair) second = tokenize(*pair);

  const std::size_t total = first.size() + (second ? second->size() : 0) +
                            (add_special_tokens ? num_special_tokens(second.has_value()) : 0);
  if (truncation.max_length > 0 && total > truncation.max_length) {
    truncate(first, second ? &*second : nullptr, total - truncation.max_length, truncation);
  }

  Encoding out;
  auto special = [&](std::int32_t id, const std::string& token, std::int32_t type_id) {
    out.ids.push_back(id);
    out.tokens.push_back(token);
    out.offsets.emplace_back(0, 0);
    out.type_ids.push_back(type_id);
    out.special_tokens_mask.push_back(1);
    out.word_ids.push_back(-1);
  };
  if (!add_special_tokens) {
    // prepare_for_model without special tokens: type ids are all 0.
    append(out, first, 0);
    if (second) append(out, *second, 0);
    return out;
  }
  const std::int32_t second_type = layout_.second_text_type_one ? 1 : 0;
  special(cls_id_, cls_token_, 0);
  append(out, first, 0);
  special(sep_id_, sep_token_, 0);
  if (second) {
    if (layout_.double_sep_in_pair) special(sep_id_, sep_token_, 0);
    append(out, *second, second_type);
    special(sep_id_, sep_token_, second_type);
  }
  return out;
}

}  // namespace onepass::tokenizer::slow
