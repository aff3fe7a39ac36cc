// tokenizer.json normalizers other than Precompiled; semantics of the `tokenizers` crate
// (normalizers/*.rs), which differ from the Python BERT helpers in places noted below.
#include "tokenizer/hf_json/normalizers.h"

#include <vector>

#include "tokenizer/common/unicode.h"
#include "tokenizer/hf_json/regex.h"

namespace onepass::tokenizer::hf_json {
namespace {

void apply_unicode(NormalizedString& s, unicode::NormalForm form) {
  std::vector<std::uint32_t> source;
  auto text = unicode::normalize(s.get(), form, &source);
  s.apply(std::move(text), source);
}

void apply_lowercase(NormalizedString& s) {
  std::vector<std::uint32_t> source;
  // Rust's char::to_lowercase, one code point at a time: no final-sigma context.
  auto text = unicode::lowercase(s.get(), /*final_sigma=*/false, &source);
  s.apply(std::move(text), source);
}

class BertNormalizer final : public Normalizer {
 public:
  explicit BertNormalizer(const Json& j)
      : clean_text_(get_bool(j, "BertNormalizer", "clean_text", true)),
        handle_chinese_chars_(get_bool(j, "BertNormalizer", "handle_chinese_chars", true)),
        lowercase_(get_bool(j, "BertNormalizer", "lowercase", true)) {
    // strip_accents null means "follow lowercase" (the crate's unwrap_or(lowercase)).
    strip_accents_ = get_bool(j, "BertNormalizer", "strip_accents", lowercase_);
  }

  void normalize(NormalizedString& s) const override {
    if (clean_text_) {
      // The crate uses Rust's char::is_whitespace (Unicode White_Space) here, not Python's Zs.
      s.filter_map([](char32_t c) { return !(c == 0 || c == 0xFFFD || unicode::is_control(c)); },
                   [](char32_t c) {
                     return c == '\t' || c == '\n' || c == '\r' || unicode::is_white_space(c) ? U' '
                                                                                              : c;
                   });
    }
    if (handle_chinese_chars_) {
      bool any = false;
      for (char32_t c : s.get()) any = any || unicode::is_chinese_char_rust(c);
      if (any) {
        std::u32string text;
        std::vector<std::uint32_t> source;
        for (std::uint32_t i = 0; i < s.size(); ++i) {
          const char32_t c = s.get()[i];
          if (unicode::is_chinese_char_rust(c)) {
            text += {U' ', c, U' '};
            source.insert(source.end(), 3, i);
          } else {
            text.push_back(c);
            source.push_back(i);
          }
        }
        s.apply(std::move(text), source);
      }
    }
    if (strip_accents_) {
      apply_unicode(s, unicode::NormalForm::kNFD);
      s.filter_map([](char32_t c) { return !unicode::is_nonspacing_mark(c); },
                   [](char32_t c) { return c; });
    }
    if (lowercase_) apply_lowercase(s);
  }

 private:
  bool clean_text_;
  bool handle_chinese_chars_;
  bool lowercase_;
  bool strip_accents_;
};

class UnicodeNormalizer final : public Normalizer {
 public:
  explicit UnicodeNormalizer(unicode::NormalForm form) : form_(form) {}
  void normalize(NormalizedString& s) const override { apply_unicode(s, form_); }

 private:
  unicode::NormalForm form_;
};

class Lowercase final : public Normalizer {
 public:
  void normalize(NormalizedString& s) const override { apply_lowercase(s); }
};

// The crate's StripAccents removes every combining mark (Mn, Mc, Me) and does no NFD itself.
class StripAccents final : public Normalizer {
 public:
  void normalize(NormalizedString& s) const override {
    s.filter_map([](char32_t c) { return !unicode::is_mark(c); }, [](char32_t c) { return c; });
  }
};

class Strip final : public Normalizer {
 public:
  explicit Strip(const Json& j)
      : left_(get_bool(j, "Strip", "strip_left", true)),
        right_(get_bool(j, "Strip", "strip_right", true)) {}
  void normalize(NormalizedString& s) const override { s.strip(left_, right_); }

 private:
  bool left_;
  bool right_;
};

class Replace final : public Normalizer {
 public:
  explicit Replace(const Json& j)
      : pattern_(require(j, "Replace", "pattern"), "Replace"),
        content_(unicode::decode_utf8(get_string(j, "Replace", "content"))) {}

  void normalize(NormalizedString& s) const override {
    const Matches m = pattern_.find_matches(s.get());
    s.replace(m, content_);
  }

 private:
  Pattern pattern_;
  std::u32string content_;
};

class Prepend final : public Normalizer {
 public:
  explicit Prepend(const Json& j)
      : prepend_(unicode::decode_utf8(get_string(j, "Prepend", "prepend"))) {}
  void normalize(NormalizedString& s) const override { s.prepend(prepend_); }

 private:
  std::u32string prepend_;
};

class Sequence final : public Normalizer {
 public:
  explicit Sequence(const Json& j) {
    const Json& list = require(j, "Sequence normalizer", "normalizers");
    if (!list.is_array()) bad_field("Sequence normalizer", "normalizers", "must be a list");
    for (const Json& item : list) parts_.push_back(make_normalizer(item));
  }
  void normalize(NormalizedString& s) const override {
    for (const auto& p : parts_) p->normalize(s);
  }

 private:
  std::vector<std::unique_ptr<Normalizer>> parts_;
};

}  // namespace

std::unique_ptr<Normalizer> make_normalizer(const Json& j) {
  const std::string type = type_of(j, "normalizer");
  if (type == "BertNormalizer") return std::make_unique<BertNormalizer>(j);
  if (type == "NFC") return std::make_unique<UnicodeNormalizer>(unicode::NormalForm::kNFC);
  if (type == "NFD") return std::make_unique<UnicodeNormalizer>(unicode::NormalForm::kNFD);
  if (type == "NFKC") return std::make_unique<UnicodeNormalizer>(unicode::NormalForm::kNFKC);
  if (type == "NFKD") return std::make_unique<UnicodeNormalizer>(unicode::NormalForm::kNFKD);
  if (type == "Lowercase") return std::make_unique<Lowercase>();
  if (type == "StripAccents") return std::make_unique<StripAccents>();
  if (type == "Strip") return std::make_unique<Strip>(j);
  if (type == "Replace") return std::make_unique<Replace>(j);
  if (type == "Prepend") return std::make_unique<Prepend>(j);
  if (type == "Precompiled") return make_precompiled(j);
  if (type == "Sequence") return std::make_unique<Sequence>(j);
  unsupported("normalizer", type);
}

}  // namespace onepass::tokenizer::hf_json
