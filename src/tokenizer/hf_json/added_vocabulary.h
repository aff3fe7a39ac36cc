// Added tokens of a tokenizer.json (special tokens and user-added words). They are cut out of the
// text before the model runs: first those with normalized=false on the raw text, then those
// with normalized=true on each remaining piece after the normalizer ran (the crate's
// AddedVocabulary::extract_and_normalize). Matching is leftmost-longest and non-overlapping,
// with the single_word, lstrip and rstrip rules (lstrip/rstrip take Unicode White_Space).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "tokenizer/hf_json/json_util.h"
#include "tokenizer/hf_json/model.h"
#include "tokenizer/hf_json/normalizers.h"
#include "tokenizer/hf_json/pre_tokenizers.h"

namespace onepass::tokenizer::hf_json {

struct AddedToken {
  std::string content;
  bool single_word = false;
  bool lstrip = false;
  bool rstrip = false;
  bool normalized = true;
  bool special = false;
};

class AddedVocabulary {
 public:
  // Registers the "added_tokens" list; ids follow the crate: the model's id when the content is
  // in its vocab, else the next free id after the model vocab.
  void load(const Json& list, const Model& model, const Normalizer* normalizer);

  // The text's splits: added-token splits carry their token, the others are normalized.
  std::vector<Split> extract_and_normalize(const Normalizer* normalizer, std::u32string text) const;

  std::optional<std::int32_t> token_to_id(std::string_view token) const;
  std::optional<std::int32_t> max_id() const;
  // The added token with this id (the crate's simple_id_to_token), or null.
  const AddedToken* find(std::int32_t id) const;
  // Whether `content` is the content of a special added token (the crate decides by content).
  bool is_special(std::string_view content) const;

 private:
  // Code point trie over the patterns of one matching pass.
  struct Matcher {
    struct Node {
      std::map<char32_t, std::uint32_t> children;
      std::int32_t id = -1;
    };
    std::vector<Node> nodes{Node{}};
    bool empty() const { return nodes.size() == 1; }
    void add(const std::u32string& pattern, std::int32_t id);
  };

  // (id or -1, [start, end)) pieces of `text`, as the crate's find_matches.
  std::vector<std::pair<std::int32_t, Offsets>> find_matches(const std::u32string& text,
                                                             const Matcher& matcher) const;
  void split_with(std::vector<Split>& out, const NormalizedString& s, const Matcher& m) const;

  std::unordered_map<std::string, std::int32_t> by_content_;
  std::unordered_map<std::int32_t, AddedToken> by_id_;
  Matcher raw_;         // normalized = false
  Matcher normalized_;  // normalized = true, patterns normalized like the text
};

}  // namespace onepass::tokenizer::hf_json
