// NormalizedString: alignment-keeping text edits and pattern splits; see normalized_string.h.
#include "tokenizer/hf_json/normalized_string.h"

#include <algorithm>
#include <string>

#include "base/error.h"
#include "tokenizer/common/unicode.h"

namespace onepass::tokenizer::hf_json {

NormalizedString::NormalizedString(std::u32string text, std::uint32_t original_start)
    : text_(std::move(text)) {
  align_.reserve(text_.size());
  for (std::size_t i = 0; i < text_.size(); ++i) {
    const auto o = original_start + static_cast<std::uint32_t>(i);
    align_.emplace_back(o, o + 1);
  }
  original_ = {original_start, original_start + static_cast<std::uint32_t>(text_.size())};
}

void NormalizedString::apply(std::u32string new_text, const std::vector<std::uint32_t>& source) {
  std::vector<Offsets> align;
  align.reserve(new_text.size());
  for (std::size_t j = 0; j < new_text.size(); ++j) align.push_back(align_[source[j]]);
  text_ = std::move(new_text);
  align_ = std::move(align);
}

void NormalizedString::filter_map(const std::function<bool(char32_t)>& keep,
                                  const std::function<char32_t(char32_t)>& map) {
  std::size_t out = 0;
  for (std::size_t i = 0; i < text_.size(); ++i) {
    if (!keep(text_[i])) continue;
    text_[out] = map(text_[i]);
    align_[out] = align_[i];
    ++out;
  }
  text_.resize(out);
  align_.resize(out);
}

void NormalizedString::prepend(std::u32string_view s) {
  if (text_.empty() || s.empty()) return;
  text_.insert(0, s);
  align_.insert(align_.begin(), s.size(), align_.front());
}

void NormalizedString::strip(bool left, bool right) {
  std::size_t begin = 0;
  std::size_t end = text_.size();
  if (left)
    while (begin < end && unicode::is_white_space(text_[begin])) ++begin;
  if (right)
    while (end > begin && unicode::is_white_space(text_[end - 1])) --end;
  if (begin == 0 && end == text_.size()) return;
  text_ = text_.substr(begin, end - begin);
  align_ = std::vector<Offsets>(align_.begin() + static_cast<std::ptrdiff_t>(begin),
                                align_.begin() + static_cast<std::ptrdiff_t>(end));
}

void NormalizedString::replace(const Matches& matches, std::u32string_view content) {
  bool any = false;
  std::size_t grown = 0;
  for (const auto& [range, is_match] : matches) {
    any = any || is_match;
    grown += is_match ? content.size() : range.second - range.first;
  }
  if (!any) return;
  // A pattern that matches the empty string ("a*") inserts `content` between every two code
  // points, and a Sequence of such Replaces multiplies the text each time: a hostile
  // tokenizer.json would grow a short input past any memory. Real Replaces (" " -> "▁", a
  // character class -> one character) change the length by a small factor.
  const std::size_t original = original_.second - original_.first;
  if (grown > kMaxNormalizedGrowth * std::max<std::size_t>(original, 64))
    throw Error(ErrorKind::kInvalidInput,
                "the tokenizer's Replace normalizer grows this text more than " +
                    std::to_string(kMaxNormalizedGrowth) + "-fold");
  std::u32string text;
  std::vector<Offsets> align;
  text.reserve(text_.size());
  align.reserve(text_.size());
  for (const auto& [range, is_match] : matches) {
    if (!is_match) {
      text.append(text_, range.first, range.second - range.first);
      align.insert(align.end(), align_.begin() + range.first, align_.begin() + range.second);
      continue;
    }
    // Inserted code points share the alignment of the code point before the match end.
    const Offsets a = range.second >= 1 ? align_[range.second - 1] : Offsets{0, 0};
    text.append(content);
    align.insert(align.end(), content.size(), a);
  }
  text_ = std::move(text);
  align_ = std::move(align);
}

NormalizedString NormalizedString::slice(std::size_t start, std::size_t end) const {
  NormalizedString out;
  out.text_ = text_.substr(start, end - start);
  out.align_.assign(align_.begin() + static_cast<std::ptrdiff_t>(start),
                    align_.begin() + static_cast<std::ptrdiff_t>(end));
  if (start < end) {
    out.original_ = {align_[start].first, align_[end - 1].second};
  } else {
    const auto at = start < align_.size() ? align_[start].first : original_.second;
    out.original_ = {at, at};
  }
  return out;
}

Offsets NormalizedString::to_original(std::size_t start, std::size_t end) const {
  if (start >= end || end > align_.size()) {
    // The crate returns an empty target range unchanged, shifted by the piece's origin.
    return {original_.first + static_cast<std::uint32_t>(start),
            original_.first + static_cast<std::uint32_t>(end)};
  }
  return {align_[start].first, align_[end - 1].second};
}

std::vector<NormalizedString> NormalizedString::split(const Matches& matches,
                                                      SplitBehavior behavior) const {
  // Turn matches into (range, remove) pieces as the crate's NormalizedString::split does.
  std::vector<std::pair<Offsets, bool>> pieces;
  pieces.reserve(matches.size());
  switch (behavior) {
    case SplitBehavior::kRemoved:
      pieces = matches;
      break;
    case SplitBehavior::kIsolated:
      for (const auto& m : matches) pieces.emplace_back(m.first, false);
      break;
    case SplitBehavior::kContiguous: {
      bool previous = false;
      for (const auto& [range, is_match] : matches) {
        if (is_match == previous && !pieces.empty()) {
          pieces.back().first.second = range.second;
        } else {
          pieces.emplace_back(range, false);
        }
        previous = is_match;
      }
      break;
    }
    case SplitBehavior::kMergedWithPrevious: {
      bool previous = false;
      for (const auto& [range, is_match] : matches) {
        if (is_match && !previous && !pieces.empty()) {
          pieces.back().first.second = range.second;
        } else {
          pieces.emplace_back(range, false);
        }
        previous = is_match;
      }
      break;
    }
    case SplitBehavior::kMergedWithNext: {
      bool previous = false;
      for (auto it = matches.rbegin(); it != matches.rend(); ++it) {
        const auto& [range, is_match] = *it;
        if (is_match && !previous && !pieces.empty()) {
          pieces.back().first.first = range.first;
        } else {
          pieces.emplace_back(range, false);
        }
        previous = is_match;
      }
      std::reverse(pieces.begin(), pieces.end());
      break;
    }
  }
  std::vector<NormalizedString> out;
  out.reserve(pieces.size());
  for (const auto& [range, remove] : pieces) {
    if (remove || range.first >= range.second) continue;
    out.push_back(slice(range.first, range.second));
  }
  return out;
}

Matches find_char_matches(std::u32string_view text, const std::function<bool(char32_t)>& pred) {
  Matches out;
  if (text.empty()) {
    out.push_back({{0, 0}, false});
    return out;
  }
  std::uint32_t last = 0;
  for (std::uint32_t i = 0; i < text.size(); ++i) {
    if (!pred(text[i])) continue;
    if (last < i) out.push_back({{last, i}, false});
    out.push_back({{i, i + 1}, true});
    last = i + 1;
  }
  if (last < text.size()) out.push_back({{last, static_cast<std::uint32_t>(text.size())}, false});
  return out;
}

Matches find_literal_matches(std::u32string_view text, std::u32string_view literal) {
  Matches out;
  const auto n = static_cast<std::uint32_t>(text.size());
  if (literal.empty()) {
    out.push_back({{0, n}, false});
    return out;
  }
  if (text.empty()) {
    out.push_back({{0, 0}, false});
    return out;
  }
  std::uint32_t last = 0;
  std::size_t pos = text.find(literal);
  while (pos != std::u32string_view::npos) {
    const auto start = static_cast<std::uint32_t>(pos);
    const auto end = static_cast<std::uint32_t>(pos + literal.size());
    if (last < start) out.push_back({{last, start}, false});
    out.push_back({{start, end}, true});
    last = end;
    pos = text.find(literal, end);
  }
  if (last < n) out.push_back({{last, n}, false});
  return out;
}

void invert_matches(Matches& matches) {
  for (auto& m : matches) m.second = !m.second;
}

}  // namespace onepass::tokenizer::hf_json
