// Unigram: best segmentation by Viterbi over a byte trie of the pieces (the crate's
// encode_optimized: ties keep the first candidate in start order, shortest piece first), an
// unknown code point costs min_score - 10 and consecutive unknowns fuse into one unk token;
// byte_fallback turns an unknown piece into <0xXX> tokens when all of them exist.
#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

#include "base/error.h"
#include "tokenizer/common/unicode.h"
#include "tokenizer/hf_json/model.h"

namespace onepass::tokenizer::hf_json {
namespace {

// Byte trie: children of a node are contiguous and sorted by byte.
class ByteTrie {
 public:
  void build(const std::vector<std::pair<std::string, std::int32_t>>& keys) {
    // Build through ordered maps, then flatten breadth-first.
    struct Tmp {
      std::map<unsigned char, std::size_t> children;
      std::int32_t value = -1;
    };
    std::vector<Tmp> tmp(1);
    for (const auto& [key, value] : keys) {
      std::size_t node = 0;
      for (unsigned char b : key) {
        auto it = tmp[node].children.find(b);
        if (it == tmp[node].children.end()) {
          tmp.emplace_back();
          it = tmp[node].children.emplace(b, tmp.size() - 1).first;
        }
        node = it->second;
      }
      tmp[node].value = value;
    }
    nodes_.assign(tmp.size(), Node{});
    std::vector<std::size_t> order{0};
    std::vector<std::uint32_t> index(tmp.size(), 0);
    for (std::size_t q = 0; q < order.size(); ++q) {
      const std::size_t t = order[q];
      Node& n = nodes_[index[t]];
      n.value = tmp[t].value;
      n.first_child = static_cast<std::uint32_t>(order.size());
      n.num_children = static_cast<std::uint32_t>(tmp[t].children.size());
      for (const auto& [b, child] : tmp[t].children) {
        index[child] = static_cast<std::uint32_t>(order.size());
        order.push_back(child);
        labels_.resize(order.size());
        labels_[order.size() - 1] = b;
      }
    }
    labels_.resize(order.size());
  }

  // Calls fn(length, value) for every key that prefixes `text`, shortest first.
  template <typename Fn>
  void common_prefix_search(std::string_view text, Fn&& fn) const {
    std::uint32_t node = 0;
    for (std::size_t i = 0; i < text.size(); ++i) {
      const Node& n = nodes_[node];
      const auto b = static_cast<unsigned char>(text[i]);
      const auto begin = labels_.begin() + n.first_child;
      const auto end = begin + n.num_children;
      const auto it = std::lower_bound(begin, end, b);
      if (it == end || *it != b) return;
      node = static_cast<std::uint32_t>(it - labels_.begin());
      if (nodes_[node].value >= 0) fn(i + 1, nodes_[node].value);
    }
  }

 private:
  struct Node {
    std::int32_t value = -1;
    std::uint32_t first_child = 0;
    std::uint32_t num_children = 0;
  };
  std::vector<Node> nodes_;
  std::vector<unsigned char> labels_;
};

class Unigram final : public Model {
 public:
  explicit Unigram(const Json& j) {
    const Json& vocab = require(j, "Unigram", "vocab");
    if (!vocab.is_array()) bad_field("Unigram", "vocab", "must be a list of [piece, score]");
    double min_score = std::numeric_limits<double>::infinity();
    for (const Json& item : vocab) {
      if (!item.is_array() || item.size() != 2 || !item[0].is_string() || !item[1].is_number())
        bad_field("Unigram", "vocab", "must be a list of [piece, score]");
      pieces_.push_back(item[0].get<std::string>());
      scores_.push_back(item[1].get<double>());
      vocab_[pieces_.back()] = static_cast<std::int32_t>(pieces_.size() - 1);
      min_score = std::min(min_score, scores_.back());
    }
    if (j.contains("unk_id") && !j.at("unk_id").is_null()) {
      const auto unk = get_int(j, "Unigram", "unk_id");
      if (pieces_.empty()) bad_field("Unigram", "vocab", "is empty but unk_id is set");
      if (unk < 0 || static_cast<std::size_t>(unk) >= pieces_.size())
        bad_field("Unigram", "unk_id", "is outside the vocab");
      unk_id_ = static_cast<std::int32_t>(unk);
    }
    byte_fallback_ = get_bool(j, "Unigram", "byte_fallback", false);
    unk_score_ = min_score - 10.0;
    // Duplicate pieces resolve to the last id, as the crate's token -> id map does.
    std::vector<std::pair<std::string, std::int32_t>> keys;
    keys.reserve(vocab_.size());
    for (const auto& [piece, id] : vocab_)
      if (!piece.empty()) keys.emplace_back(piece, id);
    trie_.build(keys);
  }

  void tokenize(std::u32string_view text, std::vector<Token>& out) const override {
    if (text.empty()) return;
    std::string s;
    std::vector<std::uint32_t> char_at;  // byte offset -> code point index (boundaries)
    for (std::uint32_t i = 0; i < text.size(); ++i) {
      const std::size_t before = s.size();
      unicode::append_utf8(text[i], s);
      char_at.resize(s.size(), i);
      char_at[before] = i;
    }
    char_at.push_back(static_cast<std::uint32_t>(text.size()));
    const std::size_t size = s.size();

    struct Best {
      std::int32_t id = 0;
      double score = 0.0;
      std::int64_t starts_at = -1;
    };
    std::vector<Best> best(size + 1);
    std::size_t pos = 0;
    while (pos < size) {
      const double here = best[pos].score;
      const std::size_t mblen = unicode::utf8_length(text[char_at[pos]]);
      bool has_single = false;
      trie_.common_prefix_search(
          std::string_view(s).substr(pos), [&](std::size_t len, std::int32_t id) {
            Best& target = best[pos + len];
            const double candidate = scores_[static_cast<std::size_t>(id)] + here;
            if (target.starts_at < 0 || candidate > target.score) {
              target = Best{id, candidate, static_cast<std::int64_t>(pos)};
            }
            if (len == mblen) has_single = true;
          });
      if (!has_single) {
        if (!unk_id_)
          throw Error(ErrorKind::kInvalidInput,
                      "tokenizer.json Unigram: the input has a piece outside the vocab and the "
                      "model has no unk_id");
        Best& target = best[pos + mblen];
        const double candidate = unk_score_ + here;
        if (target.starts_at < 0 || candidate > target.score)
          target = Best{*unk_id_, candidate, static_cast<std::int64_t>(pos)};
      }
      pos += mblen;
    }

    // Walk back; consecutive unk pieces fuse into one.
    std::vector<std::pair<std::size_t, std::size_t>> pieces;  // byte ranges, reversed
    std::vector<bool> is_unk;
    std::size_t end = size;
    while (end > 0) {
      const Best& node = best[end];
      const auto start = static_cast<std::size_t>(node.starts_at);
      const bool unk = unk_id_ && node.id == *unk_id_;
      if (unk && !pieces.empty() && is_unk.back()) {
        pieces.back().first = start;
      } else {
        pieces.emplace_back(start, end);
        is_unk.push_back(unk);
      }
      end = start;
    }
    for (auto it = pieces.rbegin(); it != pieces.rend(); ++it) {
      const std::string_view piece(s.data() + it->first, it->second - it->first);
      const std::uint32_t cs = char_at[it->first];
      const std::uint32_t ce = char_at[it->second];
      if (const auto id = find_id(vocab_, piece)) {
        out.push_back(Token{*id, std::string(piece), cs, ce});
        continue;
      }
      if (byte_fallback_ && emit_bytes(piece, cs, ce, out)) continue;
      if (!unk_id_)
        throw Error(ErrorKind::kInvalidInput,
                    "tokenizer.json Unigram: no unk_id for an unknown piece");
      out.push_back(Token{*unk_id_, std::string(piece), cs, ce});
    }
  }

  std::optional<std::int32_t> token_to_id(std::string_view token) const override {
    return find_id(vocab_, token);
  }
  std::optional<std::string> id_to_token(std::int32_t id) const override {
    if (id < 0 || static_cast<std::size_t>(id) >= pieces_.size()) return std::nullopt;
    return pieces_[static_cast<std::size_t>(id)];
  }
  std::size_t vocab_size() const override { return pieces_.size(); }
  std::string_view kind() const override { return "Unigram"; }

 private:
  bool emit_bytes(std::string_view piece, std::uint32_t cs, std::uint32_t ce,
                  std::vector<Token>& out) const {
    std::vector<Token> bytes;
    char name[8];
    for (unsigned char b : piece) {
      std::snprintf(name, sizeof(name), "<0x%02X>", b);
      const auto id = find_id(vocab_, name);
      if (!id) return false;
      bytes.push_back(Token{*id, name, cs, ce});
    }
    out.insert(out.end(), bytes.begin(), bytes.end());
    return true;
  }

  std::vector<std::string> pieces_;
  std::vector<double> scores_;
  Vocab vocab_;
  ByteTrie trie_;
  std::optional<std::int32_t> unk_id_;
  bool byte_fallback_ = false;
  double unk_score_ = 0.0;
};

}  // namespace

std::unique_ptr<Model> make_unigram(const Json& j) { return std::make_unique<Unigram>(j); }

}  // namespace onepass::tokenizer::hf_json
