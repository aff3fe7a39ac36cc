// Splits text on the added tokens the way transformers' slow tokenizers do (v4.47.1,
// PreTrainedTokenizer.tokenize): the Trie of tokenization_utils.py finds the matches (its
// longest-first lookahead and its quirks included), then each matched token's lstrip / rstrip
// eat Python whitespace (str.isspace) from its neighbours and single_word glues it back to a
// neighbour that is not separated by a space. Works on code points, as Python strings do.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "tokenizer/slow/slow_config.h"

namespace onepass::tokenizer::slow {

// A piece of the text after splitting: the code points and, for each, the index of the code
// point of the original text it is (so offsets survive stripping and gluing).
struct TextPiece {
  std::u32string text;
  std::vector<std::uint32_t> source;
  int added = -1;  // index into the splitter's tokens when the piece is an added token
};

class AddedTokenSplitter {
 public:
  explicit AddedTokenSplitter(std::vector<AddedTokenSpec> tokens);

  // Splits `text` (already decoded); empty pieces are dropped, as tokenize() skips them.
  std::vector<TextPiece> split(std::u32string_view text) const;

  // The Trie's cut positions alone (Trie.split then cut_text), for tests: [start, end) pairs.
  std::vector<std::pair<std::size_t, std::size_t>> trie_cuts(std::u32string_view text) const;

  const std::vector<AddedTokenSpec>& tokens() const { return tokens_; }

 private:
  struct Node {
    std::vector<std::pair<char32_t, int>> children;
    bool terminal = false;
  };
  int child(int node, char32_t c) const;
  void add(const std::u32string& word);

  std::vector<AddedTokenSpec> tokens_;
  std::unordered_map<std::u32string, int> by_content_;
  std::vector<Node> nodes_;  // nodes_[0] is the root
};

}  // namespace onepass::tokenizer::slow
