// Text helpers of the server tests that work answers out again: Python's str indices are code
// points.
#pragma once

#include <cstddef>
#include <string>

namespace onepass::testing {

// UTF-8 to code points (the fixtures' texts are valid UTF-8).
inline std::u32string code_points(const std::string& s) {
  std::u32string out;
  for (std::size_t i = 0; i < s.size();) {
    const auto c = static_cast<unsigned char>(s[i]);
    const int length = c < 0x80 ? 1 : c < 0xE0 ? 2 : c < 0xF0 ? 3 : 4;
    char32_t cp = length == 1   ? c
                  : length == 2 ? (c & 0x1F)
                  : length == 3 ? (c & 0x0F)
                                : (c & 0x07);
    for (int k = 1; k < length; ++k) cp = (cp << 6) | (static_cast<unsigned char>(s[i + k]) & 0x3F);
    out.push_back(cp);
    i += static_cast<std::size_t>(length);
  }
  return out;
}

}  // namespace onepass::testing
