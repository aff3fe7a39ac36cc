// Byte-string replacement as Python's str.replace and Rust's String::replace do it: every
// non-overlapping occurrence, left to right. The decoders and transformers' space cleanup use it.
#pragma once

#include <string>
#include <string_view>
#include <utility>

namespace onepass::tokenizer {

inline void replace_all(std::string& s, std::string_view from, std::string_view to) {
  if (from.empty()) return;
  std::string out;
  std::size_t begin = 0;
  for (std::size_t at = s.find(from); at != std::string::npos; at = s.find(from, begin)) {
    out.append(s, begin, at - begin);
    out.append(to);
    begin = at + from.size();
  }
  out.append(s, begin, std::string::npos);
  s = std::move(out);
}

}  // namespace onepass::tokenizer
