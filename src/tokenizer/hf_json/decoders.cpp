// The `tokenizers` library's decoders, one class each, read from tokenizer.json's "decoder".
#include "tokenizer/hf_json/decoders.h"

#include <unordered_map>

#include "tokenizer/common/replace.h"
#include "tokenizer/common/unicode.h"
#include "tokenizer/hf_json/pre_tokenizers.h"

namespace onepass::tokenizer::hf_json {
namespace {

char32_t single_char(const Json& j, std::string_view where, const char* field) {
  const std::u32string s = unicode::decode_utf8(get_string(j, where, field));
  if (s.size() != 1) bad_field(where, field, "must be one character");
  return s[0];
}

// Glues subwords back: a token with the prefix joins the one before, any other token after the
// first gets a space; `cleanup` then removes the spaces the tokenizer put before punctuation and
// English contractions, token by token.
class WordPieceDecoder final : public Decoder {
 public:
  explicit WordPieceDecoder(const Json& j)
      : prefix_(get_string_or(j, "WordPiece", "prefix", "##")),
        cleanup_(get_bool(j, "WordPiece", "cleanup", true)) {}

  void decode_chain(std::vector<std::string>& tokens) const override {
    for (std::size_t i = 0; i < tokens.size(); ++i) {
      std::string& token = tokens[i];
      if (i != 0) {
        if (!prefix_.empty() && token.starts_with(prefix_)) {
          token.erase(0, prefix_.size());
        } else {
          std::string spaced(" ");  // not insert(0, ...): GCC 12 warns falsely (-Wrestrict)
          spaced.append(token);
          token = std::move(spaced);
        }
      }
      if (cleanup_) {
        for (const auto& [from, to] : kCleanups) replace_all(token, from, to);
      }
    }
  }

 private:
  // The crate's wordpiece cleanup, in its order (it also turns " do not" into " don't").
  static constexpr std::pair<std::string_view, std::string_view> kCleanups[] = {
      {" .", "."},   {" ?", "?"},     {" !", "!"},    {" ,", ","},
      {" ' ", "'"},  {" n't", "n't"}, {" 'm", "'m"},  {" do not", " don't"},
      {" 's", "'s"}, {" 've", "'ve"}, {" 're", "'re"}};

  std::string prefix_;
  bool cleanup_;
};

// GPT-2's byte stand-ins back to bytes. A token with a character outside the table keeps its
// own UTF-8 bytes; the bytes of all tokens are read as one text.
class ByteLevelDecoder final : public Decoder {
 public:
  ByteLevelDecoder() {
    for (int b = 0; b < 256; ++b)
      byte_of_[byte_to_char(static_cast<std::uint8_t>(b))] = static_cast<char>(b);
  }

  void decode_chain(std::vector<std::string>& tokens) const override {
    std::string bytes;
    for (const std::string& token : tokens) {
      std::string mapped;
      bool all_mapped = true;
      for (const char32_t c : unicode::decode_utf8(token)) {
        const auto it = byte_of_.find(c);
        if (it == byte_of_.end()) {
          all_mapped = false;
          break;
        }
        mapped.push_back(it->second);
      }
      bytes += all_mapped ? mapped : token;
    }
    tokens.assign(1, utf8_lossy(bytes));
  }

 private:
  std::unordered_map<char32_t, char> byte_of_;
};

// SentencePiece's word marker back to spaces; in the first token the markers are dropped unless
// the pre-tokenizer never prepended one.
class MetaspaceDecoder final : public Decoder {
 public:
  explicit MetaspaceDecoder(const Json& j)
      : replacement_(single_char(j, "Metaspace", "replacement")) {
    const std::string scheme = get_string_or(j, "Metaspace", "prepend_scheme", "always");
    drop_first_ = scheme != "never";
    if (j.contains("add_prefix_space") && !j.contains("prepend_scheme"))
      drop_first_ = get_bool(j, "Metaspace", "add_prefix_space", true);
  }

  void decode_chain(std::vector<std::string>& tokens) const override {
    for (std::size_t i = 0; i < tokens.size(); ++i) {
      std::string out;
      for (const char32_t c : unicode::decode_utf8(tokens[i])) {
        if (c != replacement_) {
          unicode::append_utf8(c, out);
        } else if (i != 0 || !drop_first_) {
          out.push_back(' ');
        }
      }
      tokens[i] = std::move(out);
    }
  }

 private:
  char32_t replacement_;
  bool drop_first_ = true;
};

// BPE's end-of-word suffix ("</w>") back to a space, none after the last token.
class BpeDecoder final : public Decoder {
 public:
  explicit BpeDecoder(const Json& j) : suffix_(get_string_or(j, "BPEDecoder", "suffix", "</w>")) {}
  void decode_chain(std::vector<std::string>& tokens) const override {
    for (std::size_t i = 0; i < tokens.size(); ++i)
      replace_all(tokens[i], suffix_, i + 1 == tokens.size() ? "" : " ");
  }

 private:
  std::string suffix_;
};

class ReplaceDecoder final : public Decoder {
 public:
  ReplaceDecoder(std::string pattern, std::string content)
      : pattern_(std::move(pattern)), content_(std::move(content)) {}
  void decode_chain(std::vector<std::string>& tokens) const override {
    for (std::string& token : tokens) replace_all(token, pattern_, content_);
  }

 private:
  std::string pattern_;
  std::string content_;
};

// Runs of "<0xHH>" tokens back to the bytes they stand for; a run that is not valid UTF-8
// becomes one U+FFFD per byte token.
class ByteFallbackDecoder final : public Decoder {
 public:
  void decode_chain(std::vector<std::string>& tokens) const override {
    std::vector<std::string> out;
    std::string bytes;
    std::size_t byte_tokens = 0;
    const auto flush = [&] {
      if (byte_tokens == 0) return;
      if (utf8_lossy(bytes) == bytes) {
        out.push_back(bytes);
      } else {
        for (std::size_t i = 0; i < byte_tokens; ++i) out.emplace_back("\xEF\xBF\xBD");
      }
      bytes.clear();
      byte_tokens = 0;
    };
    for (std::string& token : tokens) {
      if (const auto byte = parse_byte(token)) {
        bytes.push_back(static_cast<char>(*byte));
        ++byte_tokens;
        continue;
      }
      flush();
      out.push_back(std::move(token));
    }
    flush();
    tokens = std::move(out);
  }

 private:
  static std::optional<unsigned> parse_byte(std::string_view t) {
    if (t.size() != 6 || !t.starts_with("<0x") || t[5] != '>') return std::nullopt;
    unsigned value = 0;
    for (const char c : t.substr(3, 2)) {
      value <<= 4;
      if (c >= '0' && c <= '9')
        value |= static_cast<unsigned>(c - '0');
      else if (c >= 'A' && c <= 'F')
        value |= static_cast<unsigned>(c - 'A' + 10);
      else if (c >= 'a' && c <= 'f')
        value |= static_cast<unsigned>(c - 'a' + 10);
      else
        return std::nullopt;
    }
    return value;
  }
};

class FuseDecoder final : public Decoder {
 public:
  void decode_chain(std::vector<std::string>& tokens) const override {
    std::string all;
    for (const std::string& token : tokens) all += token;
    tokens.assign(1, std::move(all));
  }
};

// Removes up to `start` leading and `stop` trailing copies of one character from each token.
class StripDecoder final : public Decoder {
 public:
  explicit StripDecoder(const Json& j)
      : content_(single_char(j, "Strip", "content")),
        start_(static_cast<std::size_t>(get_int(j, "Strip", "start"))),
        stop_(static_cast<std::size_t>(get_int(j, "Strip", "stop"))) {}

  void decode_chain(std::vector<std::string>& tokens) const override {
    for (std::string& token : tokens) {
      std::u32string chars = unicode::decode_utf8(token);
      std::size_t begin = 0;
      while (begin < start_ && begin < chars.size() && chars[begin] == content_) ++begin;
      std::size_t end = chars.size();
      while (chars.size() - end < stop_ && end > begin && chars[end - 1] == content_) --end;
      token = unicode::encode_utf8(std::u32string_view(chars).substr(begin, end - begin));
    }
  }

 private:
  char32_t content_;
  std::size_t start_;
  std::size_t stop_;
};

class SequenceDecoder final : public Decoder {
 public:
  explicit SequenceDecoder(const Json& j) {
    const Json& list = require(j, "Sequence decoder", "decoders");
    if (!list.is_array()) bad_field("Sequence decoder", "decoders", "must be a list");
    for (const Json& d : list) decoders_.push_back(make_decoder(d));
  }
  void decode_chain(std::vector<std::string>& tokens) const override {
    for (const auto& d : decoders_) d->decode_chain(tokens);
  }

 private:
  std::vector<std::unique_ptr<Decoder>> decoders_;
};

// A decoder onepass lacks: loading succeeds (encoding does not need it), decoding names it.
class UnsupportedDecoder final : public Decoder {
 public:
  explicit UnsupportedDecoder(std::string name) : name_(std::move(name)) {}
  void decode_chain(std::vector<std::string>&) const override { unsupported("decoder", name_); }

 private:
  std::string name_;
};

}  // namespace

std::unique_ptr<Decoder> make_decoder(const Json& j) {
  const std::string type = type_of(j, "decoder");
  if (type == "WordPiece") return std::make_unique<WordPieceDecoder>(j);
  if (type == "ByteLevel") return std::make_unique<ByteLevelDecoder>();
  if (type == "Metaspace") return std::make_unique<MetaspaceDecoder>(j);
  if (type == "BPEDecoder") return std::make_unique<BpeDecoder>(j);
  if (type == "ByteFallback") return std::make_unique<ByteFallbackDecoder>();
  if (type == "Fuse") return std::make_unique<FuseDecoder>();
  if (type == "Strip") return std::make_unique<StripDecoder>(j);
  if (type == "Sequence") return std::make_unique<SequenceDecoder>(j);
  if (type == "Replace") {
    const Json& pattern = require(j, "Replace decoder", "pattern");
    if (pattern.is_object() && pattern.contains("String") && pattern.at("String").is_string())
      return std::make_unique<ReplaceDecoder>(pattern.at("String").get<std::string>(),
                                              get_string(j, "Replace decoder", "content"));
    return std::make_unique<UnsupportedDecoder>("Replace (by regex)");
  }
  return std::make_unique<UnsupportedDecoder>(type);
}

std::string join_without_decoder(const std::vector<std::string>& tokens) {
  std::string out;
  for (std::size_t i = 0; i < tokens.size(); ++i) {
    if (i != 0) out.push_back(' ');
    out += tokens[i];
  }
  return out;
}

std::string utf8_lossy(std::string_view bytes) {
  std::string out;
  std::size_t i = 0;
  const auto byte = [&](std::size_t k) { return static_cast<unsigned char>(bytes[k]); };
  while (i < bytes.size()) {
    const unsigned char b = byte(i);
    std::size_t need = 0;
    unsigned char lo = 0x80, hi = 0xBF;  // the allowed range of the second byte
    if (b < 0x80) {
      out.push_back(static_cast<char>(b));
      ++i;
      continue;
    }
    if (b >= 0xC2 && b <= 0xDF)
      need = 1;
    else if (b == 0xE0)
      need = 2, lo = 0xA0;
    else if (b >= 0xE1 && b <= 0xEC)
      need = 2;
    else if (b == 0xED)
      need = 2, hi = 0x9F;
    else if (b >= 0xEE && b <= 0xEF)
      need = 2;
    else if (b == 0xF0)
      need = 3, lo = 0x90;
    else if (b >= 0xF1 && b <= 0xF3)
      need = 3;
    else if (b == 0xF4)
      need = 3, hi = 0x8F;
    // The longest prefix of a valid sequence is one error, replaced by one U+FFFD.
    std::size_t len = 1;
    bool complete = need > 0;
    for (std::size_t k = 1; k <= need; ++k) {
      const std::size_t at = i + k;
      const unsigned char min = k == 1 ? lo : 0x80, max = k == 1 ? hi : 0xBF;
      if (at >= bytes.size() || byte(at) < min || byte(at) > max) {
        complete = false;
        break;
      }
      ++len;
    }
    if (complete) {
      out.append(bytes.substr(i, len));
    } else {
      out.append("\xEF\xBF\xBD");
    }
    i += len;
  }
  return out;
}

}  // namespace onepass::tokenizer::hf_json
