// Added-token extraction; see added_vocabulary.h.
#include "tokenizer/hf_json/added_vocabulary.h"

#include <algorithm>

#include "tokenizer/common/unicode.h"

namespace onepass::tokenizer::hf_json {

void AddedVocabulary::Matcher::add(const std::u32string& pattern, std::int32_t id) {
  std::uint32_t node = 0;
  for (char32_t c : pattern) {
    auto it = nodes[node].children.find(c);
    if (it == nodes[node].children.end()) {
      nodes.emplace_back();
      it = nodes[node].children.emplace(c, static_cast<std::uint32_t>(nodes.size() - 1)).first;
    }
    node = it->second;
  }
  nodes[node].id = id;
}

void AddedVocabulary::load(const Json& list, const Model& model, const Normalizer* normalizer) {
  if (list.is_null()) return;
  if (!list.is_array()) bad_field("added_tokens", "added_tokens", "must be a list");
  for (const Json& item : list) {
    AddedToken t;
    t.content = get_string(item, "added_tokens", "content");
    t.single_word = get_bool(item, "added_tokens", "single_word", false);
    t.lstrip = get_bool(item, "added_tokens", "lstrip", false);
    t.rstrip = get_bool(item, "added_tokens", "rstrip", false);
    t.special = get_bool(item, "added_tokens", "special", false);
    t.normalized = get_bool(item, "added_tokens", "normalized", !t.special);
    if (t.content.empty()) continue;

    std::int32_t id = 0;
    if (const auto known = token_to_id(t.content)) {
      id = *known;
    } else if (const auto in_model = model.token_to_id(t.content)) {
      id = *in_model;
    } else {
      // The crate's next_id: after the model vocab, or after the largest added id when that
      // already lies beyond it.
      const auto vocab = static_cast<std::int32_t>(model.vocab_size());
      const auto top = max_id();
      id = !top ? vocab : (*top >= vocab || vocab == 0 ? *top + 1 : vocab);
    }
    by_content_[t.content] = id;
    by_id_[id] = t;
  }
  // Rebuild both matchers from the final token set.
  raw_ = Matcher{};
  normalized_ = Matcher{};
  std::vector<std::int32_t> ids;
  for (const auto& [id, t] : by_id_) ids.push_back(id);
  std::sort(ids.begin(), ids.end());
  for (std::int32_t id : ids) {
    const AddedToken& t = by_id_.at(id);
    std::u32string pattern = unicode::decode_utf8(t.content);
    if (t.normalized) {
      if (normalizer) {
        NormalizedString s(pattern, 0);
        normalizer->normalize(s);
        pattern = s.get();
      }
      if (!pattern.empty()) normalized_.add(pattern, id);
    } else {
      raw_.add(pattern, id);
    }
  }
}

std::optional<std::int32_t> AddedVocabulary::token_to_id(std::string_view token) const {
  const auto it = by_content_.find(std::string(token));
  if (it == by_content_.end()) return std::nullopt;
  return it->second;
}

std::optional<std::int32_t> AddedVocabulary::max_id() const {
  std::optional<std::int32_t> top;
  for (const auto& [id, t] : by_id_) top = top ? std::max(*top, id) : id;
  return top;
}

const AddedToken* AddedVocabulary::find(std::int32_t id) const {
  const auto it = by_id_.find(id);
  return it == by_id_.end() ? nullptr : &it->second;
}

bool AddedVocabulary::is_special(std::string_view content) const {
  const auto id = token_to_id(content);
  return id && by_id_.at(*id).special;
}

std::vector<std::pair<std::int32_t, Offsets>> AddedVocabulary::find_matches(
    const std::u32string& text, const Matcher& matcher) const {
  std::vector<std::pair<std::int32_t, Offsets>> out;
  const auto n = static_cast<std::uint32_t>(text.size());
  if (text.empty()) {
    out.push_back({-1, {0, 0}});
    return out;
  }
  if (matcher.empty()) {
    out.push_back({-1, {0, n}});
    return out;
  }
  std::uint32_t start_offset = 0;
  std::uint32_t scan = 0;  // where the automaton resumes: after the previous raw match
  while (scan < n) {
    // Leftmost-longest: the first position with any match, the longest match there.
    std::uint32_t mstart = 0;
    std::uint32_t mend = 0;
    std::int32_t id = -1;
    for (std::uint32_t i = scan; i < n && id < 0; ++i) {
      std::uint32_t node = 0;
      for (std::uint32_t k = i; k < n; ++k) {
        const auto& children = matcher.nodes[node].children;
        const auto it = children.find(text[k]);
        if (it == children.end()) break;
        node = it->second;
        if (matcher.nodes[node].id >= 0) {
          id = matcher.nodes[node].id;
          mstart = i;
          mend = k + 1;
        }
      }
    }
    if (id < 0) break;
    scan = mend;
    const AddedToken& token = by_id_.at(id);
    std::uint32_t start = mstart;
    std::uint32_t stop = mend;
    if (token.single_word) {
      const bool start_space = start == 0 || !unicode::is_word_char(text[start - 1]);
      const bool stop_space = stop == n || !unicode::is_word_char(text[stop]);
      if (!start_space || !stop_space) continue;
    }
    if (token.lstrip) {
      std::uint32_t s = start;
      while (s > 0 && unicode::is_white_space(text[s - 1])) --s;
      start = std::max(s, start_offset);  // spaces a previous match took stay with it
    }
    if (token.rstrip) {
      while (stop < n && unicode::is_white_space(text[stop])) ++stop;
    }
    if (start_offset < start) out.push_back({-1, {start_offset, start}});
    out.push_back({id, {start, stop}});
    start_offset = stop;
  }
  if (start_offset != n) out.push_back({-1, {start_offset, n}});
  return out;
}

void AddedVocabulary::split_with(std::vector<Split>& out, const NormalizedString& s,
                                 const Matcher& m) const {
  for (const auto& [id, range] : find_matches(s.get(), m)) {
    // Overlap is possible after an rstrip (as in the crate); clamp to keep slices valid.
    const std::uint32_t begin =
        std::min<std::uint32_t>(range.first, static_cast<std::uint32_t>(s.size()));
    const std::uint32_t end = std::max(
        begin, std::min<std::uint32_t>(range.second, static_cast<std::uint32_t>(s.size())));
    NormalizedString piece = s.slice(begin, end);
    if (piece.empty()) continue;
    Split split{std::move(piece), std::nullopt};
    if (id >= 0) {
      const auto len = static_cast<std::uint32_t>(split.normalized.size());
      split.tokens =
          std::vector<Token>{Token{id, unicode::encode_utf8(split.normalized.get()), 0, len}};
    }
    out.push_back(std::move(split));
  }
}

std::vector<Split> AddedVocabulary::extract_and_normalize(const Normalizer* normalizer,
                                                          std::u32string text) const {
  std::vector<Split> first;
  split_with(first, NormalizedString(std::move(text), 0), raw_);
  std::vector<Split> out;
  out.reserve(first.size());
  for (auto& split : first) {
    if (split.tokens) {
      out.push_back(std::move(split));
      continue;
    }
    if (normalizer) normalizer->normalize(split.normalized);
    split_with(out, split.normalized, normalized_);
  }
  return out;
}

}  // namespace onepass::tokenizer::hf_json
