// The SentencePiece `precompiled_charsmap` normalizer (used by XLM-R, DeBERTa-v2/v3, T5...).
//
// Blob layout (little endian): u32 trie size in bytes, the trie as u32 units of a darts-clone
// double array keyed by UTF-8 bytes, then the replacement strings, each NUL-terminated; a trie
// value is the byte offset of its replacement. The `tokenizers` crate (through spm_precompiled)
// rewrites text one extended grapheme cluster at a time: a cluster shorter than 6 bytes is
// looked up whole, and when some prefix of it is a key the replacement of the SHORTEST such
// prefix stands for the whole cluster; otherwise each code point is looked up alone. This is not
// what SentencePiece itself does (longest match over the raw string); the fixtures README lists
// the inputs where the two differ, and onepass follows the crate here.
#include <utf8proc.h>

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "base/error.h"
#include "tokenizer/common/unicode.h"
#include "tokenizer/hf_json/normalizers.h"

namespace onepass::tokenizer::hf_json {
namespace {

std::vector<std::uint8_t> decode_base64(std::string_view text) {
  auto value = [](char c) -> int {
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    if (c == '+') return 62;
    if (c == '/') return 63;
    return -1;
  };
  std::vector<std::uint8_t> out;
  out.reserve(text.size() / 4 * 3);
  std::uint32_t acc = 0;
  int bits = 0;
  std::size_t i = 0;
  for (; i < text.size() && text[i] != '='; ++i) {
    const int v = value(text[i]);
    if (v < 0) bad_field("Precompiled", "precompiled_charsmap", "is not valid base64");
    acc = (acc << 6) | static_cast<std::uint32_t>(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out.push_back(static_cast<std::uint8_t>((acc >> bits) & 0xFF));
    }
  }
  for (; i < text.size(); ++i)
    if (text[i] != '=') bad_field("Precompiled", "precompiled_charsmap", "is not valid base64");
  return out;
}

class Precompiled final : public Normalizer {
 public:
  explicit Precompiled(const Json& j) {
    const auto blob = decode_base64(get_string(j, "Precompiled", "precompiled_charsmap"));
    if (blob.size() < 4) bad_field("Precompiled", "precompiled_charsmap", "is too short");
    const std::uint32_t trie_bytes =
        blob[0] | (blob[1] << 8) | (blob[2] << 16) | (static_cast<std::uint32_t>(blob[3]) << 24);
    if (trie_bytes % 4 != 0 || trie_bytes > blob.size() - 4)
      bad_field("Precompiled", "precompiled_charsmap", "has an inconsistent trie size");
    trie_.resize(trie_bytes / 4);
    for (std::size_t k = 0; k < trie_.size(); ++k) {
      const std::size_t p = 4 + 4 * k;
      trie_[k] = blob[p] | (blob[p + 1] << 8) | (blob[p + 2] << 16) |
                 (static_cast<std::uint32_t>(blob[p + 3]) << 24);
    }
    normalized_.assign(blob.begin() + 4 + trie_bytes, blob.end());
    if (trie_.empty()) bad_field("Precompiled", "precompiled_charsmap", "has an empty trie");
  }

  void normalize(NormalizedString& s) const override {
    const std::u32string& text = s.get();
    std::u32string out;
    std::vector<std::uint32_t> source;
    out.reserve(text.size());
    source.reserve(text.size());
    bool modified = false;
    std::string utf8;
    std::u32string replacement;
    std::size_t g = 0;
    utf8proc_int32_t state = 0;  // carried across clusters (regional indicators, emoji ZWJ)
    while (g < text.size()) {
      // Extended grapheme cluster [g, e).
      std::size_t e = g + 1;
      while (e < text.size() &&
             !utf8proc_grapheme_break_stateful(static_cast<utf8proc_int32_t>(text[e - 1]),
                                               static_cast<utf8proc_int32_t>(text[e]), &state))
        ++e;
      utf8.clear();
      for (std::size_t k = g; k < e; ++k) unicode::append_utf8(text[k], utf8);
      if (utf8.size() < 6 && transform(utf8, replacement)) {
        modified = true;
        emit(replacement, g, e, out, source);
      } else {
        for (std::size_t k = g; k < e; ++k) {
          utf8.clear();
          unicode::append_utf8(text[k], utf8);
          if (transform(utf8, replacement)) {
            modified = true;
            emit(replacement, k, k + 1, out, source);
          } else {
            out.push_back(text[k]);
            source.push_back(static_cast<std::uint32_t>(k));
          }
        }
      }
      g = e;
    }
    if (modified) s.apply(std::move(out), source);
  }

 private:
  // New code point k replaces old code point begin + k; extra ones align with the last old one.
  static void emit(const std::u32string& replacement, std::size_t begin, std::size_t end,
                   std::u32string& out, std::vector<std::uint32_t>& source) {
    for (std::size_t k = 0; k < replacement.size(); ++k) {
      out.push_back(replacement[k]);
      source.push_back(static_cast<std::uint32_t>(std::min(begin + k, end - 1)));
    }
  }

  // Replacement of the shortest key that prefixes `key`, as spm_precompiled's transform().
  bool transform(const std::string& key, std::u32string& replacement) const {
    const auto offset_of = [](std::uint64_t unit) {
      return (unit >> 10) << ((unit & (1u << 9)) >> 6);
    };
    std::uint64_t node = offset_of(trie_[0]);
    for (unsigned char c : key) {
      if (c == 0) return false;
      node ^= c;
      if (node >= trie_.size()) return false;
      const std::uint64_t unit = trie_[node];
      if ((unit & ((1u << 31) | 0xFFu)) != c) return false;
      node ^= offset_of(unit);
      if ((unit >> 8) & 1) {
        if (node >= trie_.size()) return false;
        const std::size_t at = trie_[node] & ((1u << 31) - 1);
        return replacement_at(at, replacement);
      }
    }
    return false;
  }

  bool replacement_at(std::size_t at, std::u32string& replacement) const {
    if (at > normalized_.size()) return false;
    std::size_t end = at;
    while (end < normalized_.size() && normalized_[end] != 0) ++end;
    try {
      replacement = unicode::decode_utf8(
          std::string_view(reinterpret_cast<const char*>(normalized_.data()) + at, end - at));
    } catch (const Error&) {
      return false;  // a broken charsmap entry leaves the text as it is
    }
    return true;
  }

  std::vector<std::uint32_t> trie_;
  std::vector<std::uint8_t> normalized_;
};

}  // namespace

std::unique_ptr<Normalizer> make_precompiled(const Json& j) {
  return std::make_unique<Precompiled>(j);
}

}  // namespace onepass::tokenizer::hf_json
