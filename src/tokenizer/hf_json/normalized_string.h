// The text one tokenizer.json pipeline stage works on: normalized code points, each aligned to
// the [start, end) range of original code points it came from (the `tokenizers` crate's
// NormalizedString, kept in code points instead of bytes because onepass reports char offsets).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace onepass::tokenizer::hf_json {

using Offsets = std::pair<std::uint32_t, std::uint32_t>;

// How a split pattern's matches become pieces (the crate's SplitDelimiterBehavior).
enum class SplitBehavior { kRemoved, kIsolated, kMergedWithPrevious, kMergedWithNext, kContiguous };

// Successive ranges of a text, each flagged as a pattern match or not, covering it entirely
// (an empty text gives one empty non-match), the crate's Pattern::find_matches contract.
using Matches = std::vector<std::pair<Offsets, bool>>;

class NormalizedString {
 public:
  NormalizedString() = default;
  // Identity alignment; code point i of `text` is original code point original_start + i.
  NormalizedString(std::u32string text, std::uint32_t original_start);

  const std::u32string& get() const { return text_; }
  std::size_t size() const { return text_.size(); }
  bool empty() const { return text_.empty(); }
  const std::vector<Offsets>& alignments() const { return align_; }
  // Range of original code points this string covers.
  Offsets original_range() const { return original_; }

  // Replaces the text: new_text[j] takes the alignment of current code point source[j].
  void apply(std::u32string new_text, const std::vector<std::uint32_t>& source);
  // Keeps code points for which keep(c) is true, then maps the kept ones through `map`.
  void filter_map(const std::function<bool(char32_t)>& keep,
                  const std::function<char32_t(char32_t)>& map);
  // Prepends `s` when the string is not empty; the new code points align with the first one.
  void prepend(std::u32string_view s);
  // Removes leading / trailing Unicode White_Space.
  void strip(bool left, bool right);
  // Replaces every match of `matches` by `content` (the crate's NormalizedString::replace: the
  // new code points align with the last replaced one). Throws onepass::Error(kInvalidInput)
  // rather than grow the string past kMaxNormalizedGrowth times the original code points it
  // covers (at least 64 of them).
  void replace(const Matches& matches, std::u32string_view content);
  static constexpr std::size_t kMaxNormalizedGrowth = 64;

  // Sub-string over normalized code points [start, end).
  NormalizedString slice(std::size_t start, std::size_t end) const;
  // Original code point range of normalized range [start, end) (the crate's convert_offsets).
  Offsets to_original(std::size_t start, std::size_t end) const;

  // Splits by pattern matches with the given behavior; empty pieces are dropped.
  std::vector<NormalizedString> split(const Matches& matches, SplitBehavior behavior) const;

 private:
  std::u32string text_;
  std::vector<Offsets> align_;
  Offsets original_{0, 0};
};

// Pattern helpers producing Matches over code points.
Matches find_char_matches(std::u32string_view text, const std::function<bool(char32_t)>& pred);
Matches find_literal_matches(std::u32string_view text, std::u32string_view literal);
void invert_matches(Matches& matches);

}  // namespace onepass::tokenizer::hf_json
