// tokenizer.json post-processors; semantics of the crate's processors/*.rs.
#include "tokenizer/hf_json/post_processors.h"

#include <algorithm>
#include <charconv>
#include <map>

#include "tokenizer/common/unicode.h"

namespace onepass::tokenizer::hf_json {
namespace {

void append(Encoding& dst, const Encoding& src) {
  dst.ids.insert(dst.ids.end(), src.ids.begin(), src.ids.end());
  dst.type_ids.insert(dst.type_ids.end(), src.type_ids.begin(), src.type_ids.end());
  dst.tokens.insert(dst.tokens.end(), src.tokens.begin(), src.tokens.end());
  dst.offsets.insert(dst.offsets.end(), src.offsets.begin(), src.offsets.end());
  dst.special_tokens_mask.insert(dst.special_tokens_mask.end(), src.special_tokens_mask.begin(),
                                 src.special_tokens_mask.end());
  dst.word_ids.insert(dst.word_ids.end(), src.word_ids.begin(), src.word_ids.end());
}

void push_special(Encoding& e, std::int32_t id, const std::string& token, std::int32_t type_id) {
  e.ids.push_back(id);
  e.type_ids.push_back(type_id);
  e.tokens.push_back(token);
  e.offsets.emplace_back(0, 0);
  e.special_tokens_mask.push_back(1);
  e.word_ids.push_back(-1);
}

// The crate's byte_level::process_offsets: leading / trailing 'Ġ' or whitespace of a token's
// string are cut out of its offsets (char offsets, as transformers reports them).
void trim_offsets(Encoding& e, bool add_prefix_space) {
  for (std::size_t i = 0; i < e.size(); ++i) {
    const std::u32string token = unicode::decode_utf8(e.tokens[i]);
    auto is_space = [](char32_t c) { return c == 0x120 || unicode::is_white_space(c); };
    std::uint32_t leading = 0;
    while (leading < token.size() && is_space(token[leading])) ++leading;
    std::uint32_t trailing = 0;
    while (trailing < token.size() && is_space(token[token.size() - 1 - trailing])) ++trailing;
    auto& [start, end] = e.offsets[i];
    if (leading > 0) {
      const bool is_first = i == 0 || start == 0;
      if (is_first && add_prefix_space && leading == 1) leading = 0;
      start = std::min(start + leading, end);
    }
    if (trailing > 0 && end >= trailing) end = std::max(end - trailing, start);
  }
}

std::pair<std::string, std::int32_t> parse_token_pair(const Json& j, const char* where,
                                                      const char* field) {
  const Json& v = require(j, where, field);
  if (!v.is_array() || v.size() != 2 || !v[0].is_string() || !v[1].is_number_integer())
    bad_field(where, field, "must be [token, id]");
  return {v[0].get<std::string>(), v[1].get<std::int32_t>()};
}

class BertProcessing final : public PostProcessor {
 public:
  explicit BertProcessing(const Json& j)
      : sep_(parse_token_pair(j, "BertProcessing", "sep")),
        cls_(parse_token_pair(j, "BertProcessing", "cls")) {}
  std::size_t added_tokens(bool pair) const override { return pair ? 3 : 2; }
  void process(std::vector<Encoding>& encodings, bool add_special_tokens) const override {
    if (!add_special_tokens) return;
    std::vector<Encoding> out(encodings.size());
    push_special(out[0], cls_.second, cls_.first, 0);
    append(out[0], encodings[0]);
    push_special(out[0], sep_.second, sep_.first, 0);
    if (encodings.size() > 1) {
      append(out[1], encodings[1]);
      push_special(out[1], sep_.second, sep_.first, 1);
    }
    encodings = std::move(out);
  }

 private:
  std::pair<std::string, std::int32_t> sep_;
  std::pair<std::string, std::int32_t> cls_;
};

class RobertaProcessing final : public PostProcessor {
 public:
  explicit RobertaProcessing(const Json& j)
      : sep_(parse_token_pair(j, "RobertaProcessing", "sep")),
        cls_(parse_token_pair(j, "RobertaProcessing", "cls")),
        trim_offsets_(get_bool(j, "RobertaProcessing", "trim_offsets", true)),
        add_prefix_space_(get_bool(j, "RobertaProcessing", "add_prefix_space", true)) {}
  std::size_t added_tokens(bool pair) const override { return pair ? 4 : 2; }
  void process(std::vector<Encoding>& encodings, bool add_special_tokens) const override {
    for (auto& e : encodings) {
      if (trim_offsets_) trim_offsets(e, add_prefix_space_);
      e.type_ids.assign(e.size(), 0);
    }
    if (!add_special_tokens) return;
    std::vector<Encoding> out(encodings.size());
    push_special(out[0], cls_.second, cls_.first, 0);
    append(out[0], encodings[0]);
    push_special(out[0], sep_.second, sep_.first, 0);
    if (encodings.size() > 1) {
      push_special(out[1], sep_.second, sep_.first, 0);
      append(out[1], encodings[1]);
      push_special(out[1], sep_.second, sep_.first, 0);
    }
    encodings = std::move(out);
  }

 private:
  std::pair<std::string, std::int32_t> sep_;
  std::pair<std::string, std::int32_t> cls_;
  bool trim_offsets_;
  bool add_prefix_space_;
};

class ByteLevelProcessing final : public PostProcessor {
 public:
  explicit ByteLevelProcessing(const Json& j)
      : trim_offsets_(get_bool(j, "ByteLevel", "trim_offsets", true)),
        add_prefix_space_(get_bool(j, "ByteLevel", "add_prefix_space", true)) {}
  std::size_t added_tokens(bool) const override { return 0; }
  void process(std::vector<Encoding>& encodings, bool) const override {
    if (!trim_offsets_) return;
    for (auto& e : encodings) trim_offsets(e, add_prefix_space_);
  }

 private:
  bool trim_offsets_;
  bool add_prefix_space_;
};

class TemplateProcessing final : public PostProcessor {
 public:
  explicit TemplateProcessing(const Json& j) {
    const Json& specials = require(j, "TemplateProcessing", "special_tokens");
    if (!specials.is_object())
      bad_field("TemplateProcessing", "special_tokens", "must be an object");
    for (const auto& [name, tok] : specials.items()) {
      Special s;
      const Json& ids = require(tok, "TemplateProcessing", "ids");
      const Json& tokens = require(tok, "TemplateProcessing", "tokens");
      if (!ids.is_array() || !tokens.is_array() || ids.size() != tokens.size())
        bad_field("TemplateProcessing", "special_tokens", "needs ids and tokens of equal length");
      for (std::size_t k = 0; k < ids.size(); ++k) {
        if (!ids[k].is_number_integer() || !tokens[k].is_string())
          bad_field("TemplateProcessing", "special_tokens", "has a malformed entry");
        s.ids.push_back(ids[k].get<std::int32_t>());
        s.tokens.push_back(tokens[k].get<std::string>());
      }
      specials_[name] = std::move(s);
    }
    single_ = parse_template(require(j, "TemplateProcessing", "single"), "single");
    pair_ = parse_template(require(j, "TemplateProcessing", "pair"), "pair");
  }

  std::size_t added_tokens(bool pair) const override {
    std::size_t n = 0;
    for (const Piece& p : pair ? pair_ : single_)
      if (!p.is_sequence) n += specials_.at(p.id).ids.size();
    return n;
  }

  void process(std::vector<Encoding>& encodings, bool add_special_tokens) const override {
    const auto& pieces = encodings.size() > 1 ? pair_ : single_;
    std::vector<Encoding> out;
    for (const Piece& p : pieces) {
      if (p.is_sequence) {
        const std::size_t which = p.id == "A" ? 0 : 1;
        if (which >= encodings.size()) continue;
        Encoding e = encodings[which];
        e.type_ids.assign(e.size(), p.type_id);
        out.push_back(std::move(e));
      } else if (add_special_tokens) {
        const Special& s = specials_.at(p.id);
        Encoding e;
        for (std::size_t k = 0; k < s.ids.size(); ++k)
          push_special(e, s.ids[k], s.tokens[k], p.type_id);
        out.push_back(std::move(e));
      }
    }
    encodings = std::move(out);
  }

 private:
  struct Piece {
    bool is_sequence = false;
    std::string id;  // "A"/"B" for sequences, the special token's name otherwise
    std::int32_t type_id = 0;
  };
  struct Special {
    std::vector<std::int32_t> ids;
    std::vector<std::string> tokens;
  };

  std::vector<Piece> parse_template(const Json& list, const char* field) const {
    if (!list.is_array()) bad_field("TemplateProcessing", field, "must be a list");
    std::vector<Piece> out;
    for (const Json& item : list) {
      Piece p;
      if (item.is_string()) {
        // "$A:0" / "[CLS]:0" shorthand.
        std::string s = item.get<std::string>();
        const auto colon = s.find(':');
        if (colon != std::string::npos) {
          const std::string digits = s.substr(colon + 1);
          const auto [ptr, ec] =
              std::from_chars(digits.data(), digits.data() + digits.size(), p.type_id);
          if (ec != std::errc() || ptr != digits.data() + digits.size() || p.type_id < 0)
            bad_field("TemplateProcessing", field, "has a piece with a bad type id: '" + s + "'");
          s = s.substr(0, colon);
        }
        if (!s.empty() && s[0] == '$') {
          p.is_sequence = true;
          const std::string rest = s.substr(1);
          p.id = (rest == "B" || rest == "b") ? "B" : "A";
        } else {
          p.id = s;
        }
      } else if (item.is_object() && item.contains("Sequence")) {
        p.is_sequence = true;
        p.id = get_string(item.at("Sequence"), "TemplateProcessing", "id");
        p.type_id = static_cast<std::int32_t>(
            get_int(item.at("Sequence"), "TemplateProcessing", "type_id"));
        if (p.id != "A" && p.id != "B")
          bad_field("TemplateProcessing", field, "names a sequence other than A or B");
      } else if (item.is_object() && item.contains("SpecialToken")) {
        p.id = get_string(item.at("SpecialToken"), "TemplateProcessing", "id");
        p.type_id = static_cast<std::int32_t>(
            get_int(item.at("SpecialToken"), "TemplateProcessing", "type_id"));
      } else {
        bad_field("TemplateProcessing", field,
                  "has a piece that is neither Sequence nor SpecialToken");
      }
      if (!p.is_sequence && !specials_.count(p.id))
        bad_field("TemplateProcessing", field,
                  "uses special token '" + p.id + "' missing from special_tokens");
      out.push_back(std::move(p));
    }
    return out;
  }

  std::map<std::string, Special> specials_;
  std::vector<Piece> single_;
  std::vector<Piece> pair_;
};

class Sequence final : public PostProcessor {
 public:
  explicit Sequence(const Json& j) {
    const Json& list = require(j, "Sequence post_processor", "processors");
    if (!list.is_array()) bad_field("Sequence post_processor", "processors", "must be a list");
    for (const Json& item : list) parts_.push_back(make_post_processor(item));
  }
  std::size_t added_tokens(bool pair) const override {
    std::size_t n = 0;
    for (const auto& p : parts_) n += p->added_tokens(pair);
    return n;
  }
  void process(std::vector<Encoding>& encodings, bool add_special_tokens) const override {
    for (const auto& p : parts_) p->process(encodings, add_special_tokens);
  }

 private:
  std::vector<std::unique_ptr<PostProcessor>> parts_;
};

}  // namespace

Encoding merge_encodings(std::vector<Encoding>& encodings) {
  if (encodings.size() == 1) return std::move(encodings[0]);
  Encoding out;
  for (const auto& e : encodings) append(out, e);
  return out;
}

std::unique_ptr<PostProcessor> make_post_processor(const Json& j) {
  const std::string type = type_of(j, "post_processor");
  if (type == "TemplateProcessing") return std::make_unique<TemplateProcessing>(j);
  if (type == "BertProcessing") return std::make_unique<BertProcessing>(j);
  if (type == "RobertaProcessing") return std::make_unique<RobertaProcessing>(j);
  if (type == "ByteLevel") return std::make_unique<ByteLevelProcessing>(j);
  if (type == "Sequence") return std::make_unique<Sequence>(j);
  unsupported("post_processor", type);
}

}  // namespace onepass::tokenizer::hf_json
