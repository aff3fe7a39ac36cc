#include "base/client_text.h"

namespace onepass {

std::string quote_client_text(std::string_view text, std::size_t max_bytes) {
  static constexpr char kHex[] = "0123456789abcdef";
  const bool cut = text.size() > max_bytes;
  const std::string_view shown = cut ? text.substr(0, max_bytes) : text;
  std::string out;
  out.reserve(shown.size() + 32);
  out.push_back('\'');
  for (const char ch : shown) {
    const auto c = static_cast<unsigned char>(ch);
    if (c >= 0x20 && c < 0x7f && c != '\'' && c != '\\') {
      out.push_back(ch);
    } else {
      out += "\\x";
      out.push_back(kHex[c >> 4]);
      out.push_back(kHex[c & 0xf]);
    }
  }
  out.push_back('\'');
  if (cut) out += "... (" + std::to_string(text.size()) + " bytes)";
  return out;
}

std::string bounded_message(std::string message, std::size_t max_bytes) {
  constexpr std::string_view kEllipsis = "...";
  if (message.size() <= max_bytes) return message;
  std::size_t keep = max_bytes > kEllipsis.size() ? max_bytes - kEllipsis.size() : 0;
  // Back off continuation bytes so that a multi-byte character is never split.
  while (keep > 0 && (static_cast<unsigned char>(message[keep]) & 0xC0) == 0x80) --keep;
  message.resize(keep);
  message += kEllipsis;
  return message;
}

}  // namespace onepass
