// Python's str indexing on UTF-8 text: the pipelines' start / end are code points.
#pragma once

#include <algorithm>
#include <cstddef>
#include <string_view>
#include <vector>

namespace onepass::model::heads {

// Byte position of every code point of `text`, plus text.size() at the end; Python's str
// indices (the pipeline's start/end) are code points.
inline std::vector<std::size_t> code_point_starts(std::string_view text) {
  std::vector<std::size_t> starts;
  starts.reserve(text.size() + 1);
  for (std::size_t i = 0; i < text.size(); ++i) {
    if ((static_cast<unsigned char>(text[i]) & 0xC0) != 0x80) starts.push_back(i);
  }
  starts.push_back(text.size());
  return starts;
}

// text[begin:end] in code points, clamped as Python slicing is.
inline std::string_view slice(std::string_view text, const std::vector<std::size_t>& starts,
                              std::size_t begin, std::size_t end) {
  const std::size_t count = starts.size() - 1;
  begin = std::min(begin, count);
  end = std::min(end, count);
  if (end <= begin) return {};
  return text.substr(starts[begin], starts[end] - starts[begin]);
}

}  // namespace onepass::model::heads
