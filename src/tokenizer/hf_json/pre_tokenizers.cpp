// tokenizer.json pre-tokenizers except ByteLevel; semantics of the `tokenizers` crate
// (pre_tokenizers/*.rs). Whitespace tests use Rust's char::is_whitespace (Unicode White_Space).
#include "tokenizer/hf_json/pre_tokenizers.h"

#include "tokenizer/common/unicode.h"
#include "tokenizer/hf_json/regex.h"

namespace onepass::tokenizer::hf_json {
namespace {

// Rust's char::is_ascii_punctuation || unicode_categories' is_punctuation (P*): BERT's set.
bool is_punctuation(char32_t c) { return unicode::is_punctuation(c); }

class BertPreTokenizer final : public PreTokenizer {
 public:
  void pre_tokenize(std::vector<Split>& splits) const override {
    split_each(splits, [](const NormalizedString& s) {
      return s.split(find_char_matches(s.get(), unicode::is_white_space), SplitBehavior::kRemoved);
    });
    split_each(splits, [](const NormalizedString& s) {
      return s.split(find_char_matches(s.get(), is_punctuation), SplitBehavior::kIsolated);
    });
  }
};

class WhitespaceSplit final : public PreTokenizer {
 public:
  void pre_tokenize(std::vector<Split>& splits) const override {
    split_each(splits, [](const NormalizedString& s) {
      return s.split(find_char_matches(s.get(), unicode::is_white_space), SplitBehavior::kRemoved);
    });
  }
};

// The crate's Whitespace keeps the matches of `\w+|[^\w\s]+` (Rust regex, Unicode classes):
// runs of word characters, and runs of characters that are neither word nor whitespace.
class Whitespace final : public PreTokenizer {
 public:
  void pre_tokenize(std::vector<Split>& splits) const override {
    split_each(splits, [](const NormalizedString& s) {
      const std::u32string& t = s.get();
      Matches m;
      const auto n = static_cast<std::uint32_t>(t.size());
      if (n == 0) m.push_back({{0, 0}, false});
      auto kind = [&](char32_t c) {
        return unicode::is_word_char(c) ? 1 : unicode::is_white_space(c) ? 0 : 2;
      };
      std::uint32_t i = 0;
      while (i < n) {
        const int k = kind(t[i]);
        std::uint32_t j = i + 1;
        while (j < n && kind(t[j]) == k) ++j;
        m.push_back({{i, j}, k == 0});  // whitespace runs are the (inverted) non-matches
        i = j;
      }
      return s.split(m, SplitBehavior::kRemoved);
    });
  }
};

class Punctuation final : public PreTokenizer {
 public:
  explicit Punctuation(const Json& j)
      : behavior_(parse_split_behavior(j, "Punctuation", SplitBehavior::kIsolated)) {}
  void pre_tokenize(std::vector<Split>& splits) const override {
    split_each(splits, [this](const NormalizedString& s) {
      return s.split(find_char_matches(s.get(), is_punctuation), behavior_);
    });
  }

 private:
  SplitBehavior behavior_;
};

class Digits final : public PreTokenizer {
 public:
  explicit Digits(const Json& j) : individual_(get_bool(j, "Digits", "individual_digits", false)) {}
  void pre_tokenize(std::vector<Split>& splits) const override {
    // Rust's char::is_numeric: Nd, Nl and No.
    split_each(splits, [this](const NormalizedString& s) {
      return s.split(find_char_matches(s.get(), unicode::is_number),
                     individual_ ? SplitBehavior::kIsolated : SplitBehavior::kContiguous);
    });
  }

 private:
  bool individual_;
};

class SplitPattern final : public PreTokenizer {
 public:
  explicit SplitPattern(const Json& j)
      : behavior_(parse_split_behavior(j, "Split", SplitBehavior::kRemoved)),
        invert_(get_bool(j, "Split", "invert", false)),
        pattern_(require(j, "Split", "pattern"), "Split") {
    require(j, "Split", "behavior");
    pattern_.match_empty_literal_as_regex();
  }

  void pre_tokenize(std::vector<Split>& splits) const override {
    split_each(splits, [this](const NormalizedString& s) {
      Matches m = pattern_.find_matches(s.get());
      if (invert_) invert_matches(m);
      return s.split(m, behavior_);
    });
  }

 private:
  SplitBehavior behavior_;
  bool invert_;
  Pattern pattern_;
};

class Metaspace final : public PreTokenizer {
 public:
  enum class Prepend { kAlways, kFirst, kNever };

  explicit Metaspace(const Json& j) {
    const auto rep = unicode::decode_utf8(get_string(j, "Metaspace", "replacement"));
    if (rep.size() != 1) bad_field("Metaspace", "replacement", "must be one character");
    replacement_ = rep[0];
    const std::string scheme = get_string_or(j, "Metaspace", "prepend_scheme", "always");
    if (scheme == "always") {
      prepend_ = Prepend::kAlways;
    } else if (scheme == "first") {
      prepend_ = Prepend::kFirst;
    } else if (scheme == "never") {
      prepend_ = Prepend::kNever;
    } else {
      bad_field("Metaspace", "prepend_scheme", "must be always, first or never");
    }
    // Legacy files say add_prefix_space instead; false means never.
    if (j.contains("add_prefix_space") && !get_bool(j, "Metaspace", "add_prefix_space", true)) {
      if (prepend_ != Prepend::kNever && j.contains("prepend_scheme"))
        bad_field("Metaspace", "add_prefix_space", "does not match prepend_scheme");
      prepend_ = Prepend::kNever;
    }
    split_ = get_bool(j, "Metaspace", "split", true);
  }

  void pre_tokenize(std::vector<Split>& splits) const override {
    split_each(splits, [this](const NormalizedString& in) {
      NormalizedString s = in;
      const char32_t rep = replacement_;
      s.filter_map([](char32_t) { return true; },
                   [rep](char32_t c) { return c == U' ' ? rep : c; });
      const bool starts = !s.empty() && s.get()[0] == rep;
      if (prepend_ == Prepend::kAlways && !starts) {
        s.prepend(std::u32string(1, rep));
      } else if (prepend_ == Prepend::kFirst && !starts && s.original_range().first == 0) {
        s.prepend(std::u32string(1, rep));
      }
      if (!split_) return std::vector<NormalizedString>{std::move(s)};
      return s.split(find_char_matches(s.get(), [rep](char32_t c) { return c == rep; }),
                     SplitBehavior::kMergedWithNext);
    });
  }

 private:
  char32_t replacement_ = 0x2581;
  Prepend prepend_ = Prepend::kAlways;
  bool split_ = true;
};

class Sequence final : public PreTokenizer {
 public:
  explicit Sequence(const Json& j) {
    const Json& list = require(j, "Sequence pre_tokenizer", "pretokenizers");
    if (!list.is_array()) bad_field("Sequence pre_tokenizer", "pretokenizers", "must be a list");
    for (const Json& item : list) parts_.push_back(make_pre_tokenizer(item));
  }
  void pre_tokenize(std::vector<Split>& splits) const override {
    for (const auto& p : parts_) p->pre_tokenize(splits);
  }

 private:
  std::vector<std::unique_ptr<PreTokenizer>> parts_;
};

}  // namespace

void split_each(std::vector<Split>& splits,
                const std::function<std::vector<NormalizedString>(const NormalizedString&)>& fn) {
  std::vector<Split> out;
  out.reserve(splits.size());
  for (auto& split : splits) {
    if (split.tokens) {
      out.push_back(std::move(split));
      continue;
    }
    for (auto& piece : fn(split.normalized)) {
      if (!piece.empty()) out.push_back(Split{std::move(piece), std::nullopt});
    }
  }
  splits = std::move(out);
}

SplitBehavior parse_split_behavior(const Json& j, std::string_view where, SplitBehavior fallback) {
  if (!j.contains("behavior") || j.at("behavior").is_null()) return fallback;
  const std::string b = get_string(j, where, "behavior");
  if (b == "Removed") return SplitBehavior::kRemoved;
  if (b == "Isolated") return SplitBehavior::kIsolated;
  if (b == "MergedWithPrevious") return SplitBehavior::kMergedWithPrevious;
  if (b == "MergedWithNext") return SplitBehavior::kMergedWithNext;
  if (b == "Contiguous") return SplitBehavior::kContiguous;
  bad_field(where, "behavior", "is not a known split behavior");
}

std::unique_ptr<PreTokenizer> make_pre_tokenizer(const Json& j) {
  const std::string type = type_of(j, "pre_tokenizer");
  if (type == "BertPreTokenizer") return std::make_unique<BertPreTokenizer>();
  if (type == "Whitespace") return std::make_unique<Whitespace>();
  if (type == "WhitespaceSplit") return std::make_unique<WhitespaceSplit>();
  if (type == "Metaspace") return std::make_unique<Metaspace>(j);
  if (type == "ByteLevel") return make_byte_level_pre_tokenizer(j);
  if (type == "Punctuation") return std::make_unique<Punctuation>(j);
  if (type == "Split") return std::make_unique<SplitPattern>(j);
  if (type == "Digits") return std::make_unique<Digits>(j);
  if (type == "Sequence") return std::make_unique<Sequence>(j);
  unsupported("pre_tokenizer", type);
}

}  // namespace onepass::tokenizer::hf_json
