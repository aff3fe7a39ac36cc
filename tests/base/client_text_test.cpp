// Client text in messages: a short, escaped prefix, whatever the client sent.
#include "base/client_text.h"

#include <gtest/gtest.h>

#include <string>

namespace onepass {
namespace {

TEST(ClientText, ShortPrintableTextIsQuotedAsItIs) {
  EXPECT_EQ(quote_client_text("query"), "'query'");
  EXPECT_EQ(quote_client_text(""), "''");
  EXPECT_EQ(quote_client_text(std::string(64, 'a')), "'" + std::string(64, 'a') + "'");
}

TEST(ClientText, EveryOtherByteIsEscaped) {
  EXPECT_EQ(quote_client_text(std::string("a'b\\c\"d\n\0\x7f\xc3\xa9", 12)),
            "'a\\x27b\\x5cc\"d\\x0a\\x00\\x7f\\xc3\\xa9'");
}

TEST(ClientText, LongTextIsCutToAPrefixWithItsSize) {
  const std::string quoted = quote_client_text(std::string(100000, 'p'));
  EXPECT_EQ(quoted, "'" + std::string(64, 'p') + "'... (100000 bytes)");
  EXPECT_EQ(quote_client_text("abcdef", 3), "'abc'... (6 bytes)");
  // At most four bytes out per byte in, whatever the bytes.
  EXPECT_LE(quote_client_text(std::string(5000, '\x01')).size(), 4u * 64 + 32);
}

TEST(ClientText, BoundedMessageCutsAtACharacterBoundary) {
  EXPECT_EQ(bounded_message("short"), "short");
  EXPECT_EQ(bounded_message(std::string(512, 'a')), std::string(512, 'a'));
  EXPECT_EQ(bounded_message(std::string(513, 'a')), std::string(509, 'a') + "...");
  // "é" is two bytes: the cut backs off to before it rather than split it.
  std::string accents;
  for (int i = 0; i < 300; ++i) accents += "\xc3\xa9";
  const std::string cut = bounded_message(accents);
  EXPECT_LE(cut.size(), 512u);
  EXPECT_EQ(cut, accents.substr(0, 508) + "...");
  EXPECT_EQ(bounded_message("abcdefgh", 6), "abc...");
}

}  // namespace
}  // namespace onepass
