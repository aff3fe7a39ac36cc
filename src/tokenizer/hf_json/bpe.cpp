// BPE: each code point of a split starts as one symbol (continuing_subword_prefix on all but the
// first, end_of_word_suffix on the last), then merges apply lowest rank first, leftmost first
// among equal ranks (the crate's models/bpe word.rs merge_all). Unknown symbols become unk
// (fused when fuse_unk) or <0xXX> byte tokens with byte_fallback; dropout is ignored (onepass
// never samples).
#include <queue>

#include "base/error.h"
#include "tokenizer/common/unicode.h"
#include "tokenizer/hf_json/model.h"

namespace onepass::tokenizer::hf_json {
namespace {

struct PairHash {
  std::size_t operator()(std::uint64_t k) const { return std::hash<std::uint64_t>{}(k); }
};

std::uint64_t pair_key(std::int32_t a, std::int32_t b) {
  return (static_cast<std::uint64_t>(static_cast<std::uint32_t>(a)) << 32) |
         static_cast<std::uint32_t>(b);
}

class Bpe final : public Model {
 public:
  explicit Bpe(const Json& j) {
    parse_vocab(require(j, "BPE", "vocab"), "BPE", vocab_, by_id_);
    unk_token_ = get_string_or(j, "BPE", "unk_token", "");
    has_unk_ = j.contains("unk_token") && j.at("unk_token").is_string();
    prefix_ = get_string_or(j, "BPE", "continuing_subword_prefix", "");
    suffix_ = get_string_or(j, "BPE", "end_of_word_suffix", "");
    fuse_unk_ = get_bool(j, "BPE", "fuse_unk", false);
    byte_fallback_ = get_bool(j, "BPE", "byte_fallback", false);
    ignore_merges_ = get_bool(j, "BPE", "ignore_merges", false);

    const Json& merges = require(j, "BPE", "merges");
    if (!merges.is_array()) bad_field("BPE", "merges", "must be a list");
    std::uint32_t rank = 0;
    for (const Json& m : merges) {
      std::string a;
      std::string b;
      if (m.is_string()) {  // legacy "a b"
        const std::string line = m.get<std::string>();
        const auto space = line.find(' ');
        if (space == std::string::npos || line.find(' ', space + 1) != std::string::npos)
          bad_field("BPE", "merges", "has an entry that is not two tokens: '" + line + "'");
        a = line.substr(0, space);
        b = line.substr(space + 1);
      } else if (m.is_array() && m.size() == 2 && m[0].is_string() && m[1].is_string()) {
        a = m[0].get<std::string>();
        b = m[1].get<std::string>();
      } else {
        bad_field("BPE", "merges", "must hold \"a b\" strings or [a, b] pairs");
      }
      const auto a_id = find_id(vocab_, a);
      const auto b_id = find_id(vocab_, b);
      if (!a_id || !b_id || b.size() < prefix_.size())
        bad_field("BPE", "merges", "uses a token outside the vocab: '" + a + " " + b + "'");
      const std::string merged = a + b.substr(prefix_.size());
      const auto new_id = find_id(vocab_, merged);
      if (!new_id)
        bad_field("BPE", "merges", "produces a token outside the vocab: '" + merged + "'");
      merges_[pair_key(*a_id, *b_id)] = Merge{rank, *new_id};  // a later duplicate wins
      ++rank;
    }
  }

  void tokenize(std::u32string_view text, std::vector<Token>& out) const override {
    if (text.empty()) return;
    const auto n = static_cast<std::uint32_t>(text.size());
    std::string piece;
    if (ignore_merges_) {
      for (char32_t c : text) unicode::append_utf8(c, piece);
      if (const auto id = find_id(vocab_, piece)) {
        out.push_back(Token{*id, piece, 0, n});
        return;
      }
    }
    std::vector<Symbol> symbols;
    symbols.reserve(n);
    std::optional<Symbol> unk;
    for (std::uint32_t i = 0; i < n; ++i) {
      piece.clear();
      if (i > 0) piece += prefix_;
      unicode::append_utf8(text[i], piece);
      if (i + 1 == n) piece += suffix_;
      if (const auto id = find_id(vocab_, piece)) {
        if (unk) symbols.push_back(*unk), unk.reset();
        symbols.push_back(Symbol{*id, i, i + 1});
        continue;
      }
      if (byte_fallback_ && add_bytes(piece, i, symbols)) continue;
      if (!has_unk_) continue;  // no unk token: the crate silently drops the symbol
      const auto unk_id = find_id(vocab_, unk_token_);
      if (!unk_id)
        throw Error(ErrorKind::kInvalidInput,
                    "tokenizer.json BPE: unk token '" + unk_token_ + "' is not in the vocab");
      if (unk && fuse_unk_) {
        unk->end = i + 1;
      } else {
        if (unk) symbols.push_back(*unk);
        unk = Symbol{*unk_id, i, i + 1};
      }
    }
    if (unk) symbols.push_back(*unk);
    merge_all(symbols);
    for (const Symbol& s : symbols) {
      if (!s.alive) continue;
      out.push_back(Token{s.id, by_id_[static_cast<std::size_t>(s.id)], s.start, s.end});
    }
  }

  std::optional<std::int32_t> token_to_id(std::string_view token) const override {
    return find_id(vocab_, token);
  }
  std::optional<std::string> id_to_token(std::int32_t id) const override {
    if (id < 0 || static_cast<std::size_t>(id) >= by_id_.size()) return std::nullopt;
    return by_id_[static_cast<std::size_t>(id)];
  }
  std::size_t vocab_size() const override { return vocab_.size(); }
  std::string_view kind() const override { return "BPE"; }
  std::string_view continuing_subword_prefix() const override { return prefix_; }

 private:
  struct Merge {
    std::uint32_t rank;
    std::int32_t new_id;
  };
  struct Symbol {
    std::int32_t id;
    std::uint32_t start;  // code points
    std::uint32_t end;
    bool alive = true;  // false once merged into its left neighbour
    std::int32_t prev = -1;
    std::int32_t next = -1;
  };

  bool add_bytes(const std::string& piece, std::uint32_t at, std::vector<Symbol>& symbols) const {
    std::vector<std::int32_t> ids;
    char name[8];
    for (unsigned char b : piece) {
      std::snprintf(name, sizeof(name), "<0x%02X>", b);
      const auto id = find_id(vocab_, name);
      if (!id) return false;
      ids.push_back(*id);
    }
    // Byte tokens of one code point all span that code point (offsets are in code points).
    for (std::int32_t id : ids) symbols.push_back(Symbol{id, at, at + 1});
    return true;
  }

  void merge_all(std::vector<Symbol>& symbols) const {
    for (std::size_t i = 0; i < symbols.size(); ++i) {
      symbols[i].prev = static_cast<std::int32_t>(i) - 1;
      symbols[i].next = i + 1 < symbols.size() ? static_cast<std::int32_t>(i + 1) : -1;
    }
    struct Candidate {
      std::uint32_t rank;
      std::uint32_t pos;
      std::int32_t new_id;
      bool operator>(const Candidate& o) const {
        return rank != o.rank ? rank > o.rank : pos > o.pos;
      }
    };
    std::priority_queue<Candidate, std::vector<Candidate>, std::greater<>> queue;
    auto push = [&](std::size_t pos) {
      const Symbol& s = symbols[pos];
      if (s.next < 0) return;
      const auto it = merges_.find(pair_key(s.id, symbols[static_cast<std::size_t>(s.next)].id));
      if (it != merges_.end())
        queue.push(Candidate{it->second.rank, static_cast<std::uint32_t>(pos), it->second.new_id});
    };
    for (std::size_t i = 0; i + 1 < symbols.size(); ++i) push(i);
    while (!queue.empty()) {
      const Candidate top = queue.top();
      queue.pop();
      Symbol& left = symbols[top.pos];
      if (!left.alive || left.next < 0) continue;
      Symbol& right = symbols[static_cast<std::size_t>(left.next)];
      // Skip stale entries: the pair must still produce the same token.
      const auto it = merges_.find(pair_key(left.id, right.id));
      if (it == merges_.end() || it->second.new_id != top.new_id) continue;
      left.id = top.new_id;
      left.end = right.end;
      right.alive = false;
      left.next = right.next;
      if (right.next >= 0)
        symbols[static_cast<std::size_t>(right.next)].prev = static_cast<std::int32_t>(top.pos);
      if (left.prev >= 0) push(static_cast<std::size_t>(left.prev));
      push(top.pos);
    }
  }

  Vocab vocab_;
  std::vector<std::string> by_id_;
  std::unordered_map<std::uint64_t, Merge, PairHash> merges_;
  std::string unk_token_;
  bool has_unk_ = false;
  std::string prefix_;
  std::string suffix_;
  bool fuse_unk_ = false;
  bool byte_fallback_ = false;
  bool ignore_merges_ = false;
};

}  // namespace

std::unique_ptr<Model> make_bpe(const Json& j) { return std::make_unique<Bpe>(j); }

}  // namespace onepass::tokenizer::hf_json
