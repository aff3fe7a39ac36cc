#include "tokenizer/slow/added_token_splitter.h"

#include <algorithm>
#include <numeric>

#include "tokenizer/common/unicode.h"

namespace onepass::tokenizer::slow {

AddedTokenSplitter::AddedTokenSplitter(std::vector<AddedTokenSpec> tokens)
    : tokens_(std::move(tokens)) {
  nodes_.emplace_back();
  for (std::size_t i = 0; i < tokens_.size(); ++i) {
    const std::u32string content = unicode::decode_utf8(tokens_[i].content);
    if (content.empty()) continue;               // Trie.add ignores the empty string
    by_content_[content] = static_cast<int>(i);  // a later duplicate wins, as in the dict
    add(content);
  }
}

int AddedTokenSplitter::child(int node, char32_t c) const {
  for (const auto& [ch, next] : nodes_[static_cast<std::size_t>(node)].children) {
    if (ch == c) return next;
  }
  return -1;
}

void AddedTokenSplitter::add(const std::u32string& word) {
  int node = 0;
  for (char32_t c : word) {
    int next = child(node, c);
    if (next < 0) {
      next = static_cast<int>(nodes_.size());
      nodes_[static_cast<std::size_t>(node)].children.emplace_back(c, next);
      nodes_.emplace_back();
    }
    node = next;
  }
  nodes_[static_cast<std::size_t>(node)].terminal = true;
}

// Trie.split of transformers 4.47.1, step by step: `states` holds the partial matches in the
// order they started; the first one that reaches a terminal triggers a lookahead over the states
// that started no later, which picks the earliest start with its longest extension. Its odd
// corners (a partial match that just failed is still looked ahead from the next character) are
// kept on purpose: the ids must be the slow tokenizer's.
std::vector<std::pair<std::size_t, std::size_t>> AddedTokenSplitter::trie_cuts(
    std::u32string_view text) const {
  const std::size_t n = text.size();
  std::vector<std::size_t> offsets{0};
  std::vector<std::pair<std::size_t, int>> states;
  std::vector<std::size_t> to_remove;
  std::size_t skip = 0;
  auto terminal = [this](int node) { return nodes_[static_cast<std::size_t>(node)].terminal; };

  for (std::size_t current = 0; current < n; ++current) {
    if (skip != 0 && current < skip) continue;
    const char32_t c = text[current];
    to_remove.clear();
    bool reset = false;
    for (auto& state : states) {
      const std::size_t state_start = state.first;
      if (terminal(state.second)) {
        std::size_t start = state_start;
        std::size_t end = current;
        for (const auto& [lookstart, pointer] : states) {
          if (lookstart > start) break;
          int look = pointer;
          std::size_t index = 0;
          if (lookstart < start) {
            index = current + 1;
            end = current + 1;
          } else {
            index = current;
            end = current;
          }
          if (terminal(look)) {
            start = lookstart;
            end = index;
            skip = index;
          }
          while (index < n) {
            const int next = child(look, text[index]);
            if (next < 0) break;
            look = next;
            ++index;
            if (terminal(look)) {
              start = lookstart;
              end = index;
              skip = index;
            }
          }
        }
        offsets.push_back(start);
        offsets.push_back(end);
        reset = true;
        break;
      }
      const int next = child(state.second, c);
      if (next >= 0) {
        state.second = next;
      } else {
        to_remove.push_back(state_start);
      }
    }
    if (reset) {
      states.clear();
    } else if (!to_remove.empty()) {
      std::erase_if(states, [&](const auto& s) {
        return std::find(to_remove.begin(), to_remove.end(), s.first) != to_remove.end();
      });
    }
    if (current >= skip) {
      const int first = child(0, c);
      if (first >= 0) states.emplace_back(current, first);
    }
  }
  for (const auto& [start, node] : states) {
    if (terminal(node)) {
      offsets.push_back(start);
      offsets.push_back(n);
      break;
    }
  }

  // Trie.cut_text: zero-width cuts vanish; a cut that goes backwards is skipped.
  offsets.push_back(n);
  std::vector<std::pair<std::size_t, std::size_t>> cuts;
  std::size_t start = 0;
  for (std::size_t end : offsets) {
    if (start >= end) continue;
    cuts.emplace_back(start, end);
    start = end;
  }
  return cuts;
}

std::vector<TextPiece> AddedTokenSplitter::split(std::u32string_view text) const {
  std::vector<TextPiece> pieces;
  for (const auto& [start, end] : trie_cuts(text)) {
    TextPiece piece;
    piece.text.assign(text.substr(start, end - start));
    piece.source.resize(end - start);
    std::iota(piece.source.begin(), piece.source.end(), static_cast<std::uint32_t>(start));
    pieces.push_back(std::move(piece));
  }
  auto lookup = [this](const TextPiece& piece) {
    const auto it = by_content_.find(piece.text);
    return it == by_content_.end() ? -1 : it->second;
  };
  auto lstrip = [](TextPiece& piece) {
    std::size_t k = 0;
    while (k < piece.text.size() && unicode::is_python_space(piece.text[k])) ++k;
    piece.text.erase(0, k);
    piece.source.erase(piece.source.begin(), piece.source.begin() + static_cast<long>(k));
  };
  auto rstrip = [](TextPiece& piece) {
    std::size_t k = piece.text.size();
    while (k > 0 && unicode::is_python_space(piece.text[k - 1])) --k;
    piece.text.resize(k);
    piece.source.resize(k);
  };
  auto append = [](TextPiece& to, const TextPiece& from) {
    to.text += from.text;
    to.source.insert(to.source.end(), from.source.begin(), from.source.end());
  };

  // The whitespace pass of PreTrainedTokenizer.tokenize, in place and in order, so a piece that
  // an earlier token already stripped is seen stripped.
  for (std::size_t i = 0; i < pieces.size(); ++i) {
    const int index = lookup(pieces[i]);
    if (index < 0) continue;
    const AddedTokenSpec& token = tokens_[static_cast<std::size_t>(index)];
    TextPiece* left = i > 0 ? &pieces[i - 1] : nullptr;
    TextPiece* right = i + 1 < pieces.size() ? &pieces[i + 1] : nullptr;
    if (token.rstrip && right && !right->text.empty()) lstrip(*right);
    if (token.lstrip && left && !left->text.empty()) rstrip(*left);
    if (token.single_word && left && !left->text.empty() && left->text.back() != U' ') {
      append(*left, pieces[i]);
      pieces[i] = TextPiece{};
    } else if (token.single_word && right && !right->text.empty() && right->text.front() != U' ') {
      TextPiece glued = pieces[i];
      append(glued, *right);
      *right = std::move(glued);
      pieces[i] = TextPiece{};
    }
  }
  std::vector<TextPiece> out;
  out.reserve(pieces.size());
  for (auto& piece : pieces) {
    if (piece.text.empty()) continue;
    piece.added = lookup(piece);
    out.push_back(std::move(piece));
  }
  return out;
}

}  // namespace onepass::tokenizer::slow
