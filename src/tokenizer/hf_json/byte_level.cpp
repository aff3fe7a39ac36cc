// The ByteLevel pre-tokenizer (GPT-2 / RoBERTa): optional prefix space, the GPT-2 split regex,
// then every UTF-8 byte replaced by its printable stand-in so that BPE works on bytes. Each
// stand-in keeps the alignment of the code point its byte belongs to, so a token holding part
// of a multi-byte character spans the whole character.
#include <array>

#include "tokenizer/common/unicode.h"
#include "tokenizer/hf_json/pre_tokenizers.h"
#include "tokenizer/hf_json/regex.h"

namespace onepass::tokenizer::hf_json {
namespace {

constexpr const char* kGpt2Pattern =
    R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)";

// GPT-2's bytes_to_unicode: printable Latin-1 bytes map to themselves, the other 68 bytes to
// U+0100 onwards in byte order.
std::array<char32_t, 256> make_byte_table() {
  std::array<char32_t, 256> table{};
  char32_t next = 256;
  for (int b = 0; b < 256; ++b) {
    const bool printable = (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE);
    table[b] = printable ? static_cast<char32_t>(b) : next++;
  }
  return table;
}

const std::array<char32_t, 256>& byte_table() {
  static const std::array<char32_t, 256> table = make_byte_table();
  return table;
}

class ByteLevel final : public PreTokenizer {
 public:
  explicit ByteLevel(const Json& j)
      : add_prefix_space_(get_bool(j, "ByteLevel", "add_prefix_space", true)),
        use_regex_(get_bool(j, "ByteLevel", "use_regex", true)) {
    if (use_regex_) regex_ = std::make_unique<Regex>(kGpt2Pattern);
  }

  void pre_tokenize(std::vector<Split>& splits) const override {
    split_each(splits, [this](const NormalizedString& in) {
      NormalizedString s = in;
      if (add_prefix_space_ && (s.empty() || s.get()[0] != U' ')) s.prepend(U" ");
      if (!use_regex_) return std::vector<NormalizedString>{std::move(s)};
      return s.split(regex_->find_matches(s.get()), SplitBehavior::kIsolated);
    });
    const auto& table = byte_table();
    std::string utf8;
    for (auto& split : splits) {
      if (split.tokens) continue;
      NormalizedString& s = split.normalized;
      std::u32string text;
      std::vector<std::uint32_t> source;
      text.reserve(s.size() * 2);
      source.reserve(s.size() * 2);
      for (std::uint32_t i = 0; i < s.size(); ++i) {
        utf8.clear();
        unicode::append_utf8(s.get()[i], utf8);
        for (unsigned char b : utf8) {
          text.push_back(table[b]);
          source.push_back(i);
        }
      }
      s.apply(std::move(text), source);
    }
  }

 private:
  bool add_prefix_space_;
  bool use_regex_;
  std::unique_ptr<Regex> regex_;
};

}  // namespace

char32_t byte_to_char(std::uint8_t b) { return byte_table()[b]; }

std::unique_ptr<PreTokenizer> make_byte_level_pre_tokenizer(const Json& j) {
  return std::make_unique<ByteLevel>(j);
}

}  // namespace onepass::tokenizer::hf_json
