// The HPACK decoder and encoder (src/http2/hpack.h) and the Huffman code (src/http2/huffman.h)
// against RFC 7541's own examples (Appendix C), transcribed byte for byte, so that the decoder is
// checked against the spec rather than only against this encoder.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <string>
#include <vector>

#include "http2/hpack.h"
#include "http2/huffman.h"

namespace onepass::http2 {
namespace {

constexpr std::size_t kNoListLimit = ~std::size_t{0};

// "8286 8441" -> the bytes; spaces and newlines are ignored.
std::string hex(std::string_view text) {
  std::string bytes;
  int high = -1;
  for (const char c : text) {
    int digit;
    if (c >= '0' && c <= '9') {
      digit = c - '0';
    } else if (c >= 'a' && c <= 'f') {
      digit = c - 'a' + 10;
    } else {
      continue;
    }
    if (high < 0) {
      high = digit;
    } else {
      bytes.push_back(static_cast<char>(high << 4 | digit));
      high = -1;
    }
  }
  return bytes;
}

using Pairs = std::vector<std::pair<std::string, std::string>>;

Pairs decode(HpackDecoder& decoder, std::string_view block,
             std::size_t max_list_bytes = kNoListLimit) {
  std::vector<Header> headers;
  decoder.decode(block, headers, max_list_bytes);
  Pairs pairs;
  for (const Header& header : headers) pairs.emplace_back(header.name, header.value);
  return pairs;
}

bool refused(HpackDecoder& decoder, std::string_view block,
             std::size_t max_list_bytes = kNoListLimit) {
  std::vector<Header> headers;
  try {
    decoder.decode(block, headers, max_list_bytes);
  } catch (const HpackError&) {
    return true;
  }
  return false;
}

// What each dynamic table index (62, 63, ...) holds, read through indexed fields on a copy of the
// decoder; and that the index past the last is refused.
Pairs dynamic_entries(const HpackDecoder& decoder, std::size_t count) {
  Pairs entries;
  for (std::size_t i = 0; i < count; ++i) {
    HpackDecoder probe = decoder;
    const Pairs one = decode(probe, std::string(1, static_cast<char>(0x80 | (62 + i))));
    entries.push_back(one.at(0));
  }
  HpackDecoder probe = decoder;
  EXPECT_TRUE(refused(probe, std::string(1, static_cast<char>(0x80 | (62 + count)))));
  return entries;
}

// --- Huffman code -------------------------------------------------------------------------------

// RFC 7541's code is canonical: sorted by length, then symbol, each code is the previous plus one,
// shifted left by the difference in length. A mistyped code or length breaks the chain.
TEST(Hpack, HuffmanTableIsTheCanonicalCode) {
  const auto& codes = huffman_codes();
  std::vector<int> order(codes.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](int a, int b) { return codes[a].bits < codes[b].bits; });
  std::uint32_t expected = 0;
  int previous_bits = codes[order[0]].bits;
  EXPECT_EQ(previous_bits, 5);
  for (std::size_t i = 0; i < order.size(); ++i) {
    const HuffmanCode& code = codes[order[i]];
    if (i > 0) expected = (expected + 1) << (code.bits - previous_bits);
    previous_bits = code.bits;
    EXPECT_EQ(code.code, expected) << "symbol " << order[i];
    EXPECT_LT(code.code, std::uint64_t{1} << code.bits) << "symbol " << order[i];
  }
  // The last code, EOS, is all ones: the code is complete (Kraft sum 1).
  EXPECT_EQ(order.back(), 256);
  EXPECT_EQ(codes[256].bits, 30);
  EXPECT_EQ(codes[256].code, 0x3fffffffu);
}

TEST(Hpack, HuffmanRoundTripsEveryByte) {
  std::string all;
  for (int b = 0; b < 256; ++b) {
    const std::string one(1, static_cast<char>(b));
    std::string coded;
    huffman_encode(one, coded);
    EXPECT_EQ(coded.size(), huffman_encoded_size(one)) << b;
    std::string decoded;
    ASSERT_TRUE(huffman_decode(coded, decoded)) << b;
    EXPECT_EQ(decoded, one) << b;
    all += one;
  }
  std::reverse(all.begin(), all.end());
  all += all;  // every byte after every alignment of the previous code's end, roughly
  std::string coded;
  huffman_encode(all, coded);
  EXPECT_EQ(coded.size(), huffman_encoded_size(all));
  std::string decoded;
  ASSERT_TRUE(huffman_decode(coded, decoded));
  EXPECT_EQ(decoded, all);
}

TEST(Hpack, HuffmanEncodesAsTheRfcDoes) {
  // RFC 7541 C.4.1 and C.4.3.
  std::string coded;
  huffman_encode("www.example.com", coded);
  EXPECT_EQ(coded, hex("f1e3 c2e5 f23a 6ba0 ab90 f4ff"));
  coded.clear();
  huffman_encode("custom-key", coded);
  EXPECT_EQ(coded, hex("25a8 49e9 5ba9 7d7f"));
  coded.clear();
  huffman_encode("", coded);
  EXPECT_EQ(coded, "");
}

TEST(Hpack, HuffmanRefusesInvalidStrings) {
  std::string out;
  // "a" is 00011: padded with ones it is 0x1f, valid.
  EXPECT_TRUE(huffman_decode(hex("1f"), out));
  EXPECT_EQ(out, "a");
  // Padding of zeros.
  out.clear();
  EXPECT_FALSE(huffman_decode(hex("18"), out));
  // Padding of 11 ones (3, then a whole byte).
  out.clear();
  EXPECT_FALSE(huffman_decode(hex("1f ff"), out));
  // A whole byte of padding alone.
  out.clear();
  EXPECT_FALSE(huffman_decode(hex("ff"), out));
  // EOS (30 ones) inside the string.
  out.clear();
  EXPECT_FALSE(huffman_decode(hex("ffff ffff"), out));
  // An empty string is valid.
  out.clear();
  EXPECT_TRUE(huffman_decode("", out));
  EXPECT_EQ(out, "");
}

// --- RFC 7541 C.2: single representations -------------------------------------------------------

TEST(Hpack, RfcC21LiteralWithIndexing) {
  HpackDecoder decoder;
  EXPECT_EQ(decode(decoder, hex("400a 6375 7374 6f6d 2d6b 6579 0d63 7573"
                                "746f 6d2d 6865 6164 6572")),
            (Pairs{{"custom-key", "custom-header"}}));
  EXPECT_EQ(decoder.dynamic_table_size(), 55u);
  EXPECT_EQ(dynamic_entries(decoder, 1), (Pairs{{"custom-key", "custom-header"}}));
}

TEST(Hpack, RfcC22LiteralWithoutIndexing) {
  HpackDecoder decoder;
  EXPECT_EQ(decode(decoder, hex("040c 2f73 616d 706c 652f 7061 7468")),
            (Pairs{{":path", "/sample/path"}}));
  EXPECT_EQ(decoder.dynamic_table_size(), 0u);
  dynamic_entries(decoder, 0);
}

TEST(Hpack, RfcC23LiteralNeverIndexed) {
  HpackDecoder decoder;
  EXPECT_EQ(decode(decoder, hex("1008 7061 7373 776f 7264 0673 6563 7265 74")),
            (Pairs{{"password", "secret"}}));
  EXPECT_EQ(decoder.dynamic_table_size(), 0u);
}

TEST(Hpack, RfcC24Indexed) {
  HpackDecoder decoder;
  EXPECT_EQ(decode(decoder, hex("82")), (Pairs{{":method", "GET"}}));
  EXPECT_EQ(decoder.dynamic_table_size(), 0u);
}

// --- RFC 7541 C.3 / C.4: three requests on one connection ---------------------------------------

const Pairs kRequest1 = {
    {":method", "GET"}, {":scheme", "http"}, {":path", "/"}, {":authority", "www.example.com"}};
const Pairs kRequest2 = {{":method", "GET"},
                         {":scheme", "http"},
                         {":path", "/"},
                         {":authority", "www.example.com"},
                         {"cache-control", "no-cache"}};
const Pairs kRequest3 = {{":method", "GET"},
                         {":scheme", "https"},
                         {":path", "/index.html"},
                         {":authority", "www.example.com"},
                         {"custom-key", "custom-value"}};

void expect_requests(const std::string& block1, const std::string& block2,
                     const std::string& block3) {
  HpackDecoder decoder;
  EXPECT_EQ(decode(decoder, block1), kRequest1);
  EXPECT_EQ(decoder.dynamic_table_size(), 57u);
  EXPECT_EQ(dynamic_entries(decoder, 1), (Pairs{{":authority", "www.example.com"}}));

  EXPECT_EQ(decode(decoder, block2), kRequest2);
  EXPECT_EQ(decoder.dynamic_table_size(), 110u);
  EXPECT_EQ(dynamic_entries(decoder, 2),
            (Pairs{{"cache-control", "no-cache"}, {":authority", "www.example.com"}}));

  EXPECT_EQ(decode(decoder, block3), kRequest3);
  EXPECT_EQ(decoder.dynamic_table_size(), 164u);
  EXPECT_EQ(dynamic_entries(decoder, 3), (Pairs{{"custom-key", "custom-value"},
                                                {"cache-control", "no-cache"},
                                                {":authority", "www.example.com"}}));
}

TEST(Hpack, RfcC3RequestsWithoutHuffman) {
  expect_requests(hex("8286 8441 0f77 7777 2e65 7861 6d70 6c65 2e63 6f6d"),
                  hex("8286 84be 5808 6e6f 2d63 6163 6865"),
                  hex("8287 85bf 400a 6375 7374 6f6d 2d6b 6579"
                      "0c63 7573 746f 6d2d 7661 6c75 65"));
}

TEST(Hpack, RfcC4RequestsWithHuffman) {
  expect_requests(hex("8286 8441 8cf1 e3c2 e5f2 3a6b a0ab 90f4 ff"),
                  hex("8286 84be 5886 a8eb 1064 9cbf"),
                  hex("8287 85bf 4088 25a8 49e9 5ba9 7d7f 8925"
                      "a849 e95b b8e8 b4bf"));
}

// --- RFC 7541 C.5 / C.6: three responses, a 256-byte table, evictions ---------------------------

const Pairs kResponse1 = {{":status", "302"},
                          {"cache-control", "private"},
                          {"date", "Mon, 21 Oct 2013 20:13:21 GMT"},
                          {"location", "https://www.example.com"}};
const Pairs kResponse2 = {{":status", "307"},
                          {"cache-control", "private"},
                          {"date", "Mon, 21 Oct 2013 20:13:21 GMT"},
                          {"location", "https://www.example.com"}};
const Pairs kResponse3 = {
    {":status", "200"},
    {"cache-control", "private"},
    {"date", "Mon, 21 Oct 2013 20:13:22 GMT"},
    {"location", "https://www.example.com"},
    {"content-encoding", "gzip"},
    {"set-cookie", "foo=ASDJKHQKBZXOQWEOPIUAXQWEOIU; max-age=3600; version=1"}};

void expect_responses(const std::string& block1, const std::string& block2,
                      const std::string& block3) {
  HpackDecoder decoder(256);
  EXPECT_EQ(decode(decoder, block1), kResponse1);
  EXPECT_EQ(decoder.dynamic_table_size(), 222u);
  EXPECT_EQ(dynamic_entries(decoder, 4), (Pairs{{"location", "https://www.example.com"},
                                                {"date", "Mon, 21 Oct 2013 20:13:21 GMT"},
                                                {"cache-control", "private"},
                                                {":status", "302"}}));

  // ":status: 302" is evicted to make room for ":status: 307".
  EXPECT_EQ(decode(decoder, block2), kResponse2);
  EXPECT_EQ(decoder.dynamic_table_size(), 222u);
  EXPECT_EQ(dynamic_entries(decoder, 4), (Pairs{{":status", "307"},
                                                {"location", "https://www.example.com"},
                                                {"date", "Mon, 21 Oct 2013 20:13:21 GMT"},
                                                {"cache-control", "private"}}));

  EXPECT_EQ(decode(decoder, block3), kResponse3);
  EXPECT_EQ(decoder.dynamic_table_size(), 215u);
  EXPECT_EQ(dynamic_entries(decoder, 3),
            (Pairs{{"set-cookie", "foo=ASDJKHQKBZXOQWEOPIUAXQWEOIU; max-age=3600; version=1"},
                   {"content-encoding", "gzip"},
                   {"date", "Mon, 21 Oct 2013 20:13:22 GMT"}}));
}

TEST(Hpack, RfcC5ResponsesWithoutHuffman) {
  expect_responses(hex("4803 3330 3258 0770 7269 7661 7465 611d"
                       "4d6f 6e2c 2032 3120 4f63 7420 3230 3133"
                       "2032 303a 3133 3a32 3120 474d 546e 1768"
                       "7474 7073 3a2f 2f77 7777 2e65 7861 6d70"
                       "6c65 2e63 6f6d"),
                   hex("4803 3330 37c1 c0bf"),
                   hex("88c1 611d 4d6f 6e2c 2032 3120 4f63 7420"
                       "3230 3133 2032 303a 3133 3a32 3220 474d"
                       "54c0 5a04 677a 6970 7738 666f 6f3d 4153"
                       "444a 4b48 514b 425a 584f 5157 454f 5049"
                       "5541 5851 5745 4f49 553b 206d 6178 2d61"
                       "6765 3d33 3630 303b 2076 6572 7369 6f6e"
                       "3d31"));
}

TEST(Hpack, RfcC6ResponsesWithHuffman) {
  expect_responses(hex("4882 6402 5885 aec3 771a 4b61 96d0 7abe"
                       "9410 54d4 44a8 2005 9504 0b81 66e0 82a6"
                       "2d1b ff6e 919d 29ad 1718 63c7 8f0b 97c8"
                       "e9ae 82ae 43d3"),
                   hex("4883 640e ffc1 c0bf"),
                   hex("88c1 6196 d07a be94 1054 d444 a820 0595"
                       "040b 8166 e084 a62d 1bff c05a 839b d9ab"
                       "77ad 94e7 821d d7f2 e6c7 b335 dfdf cd5b"
                       "3960 d5af 2708 7f36 72c1 ab27 0fb5 291f"
                       "9587 3160 65c0 03ed 4ee5 b106 3d50 07"));
}

// --- Table size updates and eviction ------------------------------------------------------------

TEST(Hpack, TableSizeUpdates) {
  // RFC 7541 C.1.2: 1337 with a 5-bit prefix is 1f 9a 0a; as a size update, 3f 9a 0a.
  HpackDecoder at_limit(1337);
  EXPECT_EQ(decode(at_limit, hex("3f9a0a 82")), (Pairs{{":method", "GET"}}));
  HpackDecoder below(1336);
  EXPECT_TRUE(refused(below, hex("3f9a0a")));

  // Several at the start of a block are fine; one after a field is not.
  HpackDecoder decoder;
  EXPECT_EQ(decode(decoder, hex("20 3fe11f 82")), (Pairs{{":method", "GET"}}));
  HpackDecoder late;
  EXPECT_TRUE(refused(late, hex("82 20")));

  // Size 0 empties the table; a later block may grow it again.
  HpackDecoder emptied;
  decode(emptied, hex("8286 8441 0f77 7777 2e65 7861 6d70 6c65 2e63 6f6d"));
  EXPECT_EQ(emptied.dynamic_table_size(), 57u);
  decode(emptied, hex("20"));
  EXPECT_EQ(emptied.dynamic_table_size(), 0u);
  dynamic_entries(emptied, 0);
  decode(emptied, hex("3fe11f 4000 00"));  // back to 4096, then ("", "") of size 32
  EXPECT_EQ(emptied.dynamic_table_size(), 32u);
}

TEST(Hpack, EntryLargerThanTheTableEmptiesIt) {
  HpackDecoder decoder(64);
  decode(decoder, hex("4000 00"));  // ("", ""): 32 bytes
  EXPECT_EQ(decoder.dynamic_table_size(), 32u);
  // custom-key: custom-header is 55 bytes: evicts the first.
  decode(decoder, hex("400a 6375 7374 6f6d 2d6b 6579 0d63 7573 746f 6d2d 6865 6164 6572"));
  EXPECT_EQ(decoder.dynamic_table_size(), 55u);
  // 10 + 32 + 32 = 74 > 64: not an error, and the table ends empty.
  const std::string value(32, 'v');
  std::string block = hex("400a 6375 7374 6f6d 2d6b 6579 20") + value;
  EXPECT_EQ(decode(decoder, block), (Pairs{{"custom-key", value}}));
  EXPECT_EQ(decoder.dynamic_table_size(), 0u);
}

TEST(Hpack, LiteralNamedByAnEntryItEvicts) {
  // A table that fits one ("custom-key", 13 bytes) entry; the next literal takes its name from
  // that entry (index 62) and evicts it on insertion.
  HpackDecoder decoder(55);
  decode(decoder, hex("400a 6375 7374 6f6d 2d6b 6579 0d63 7573 746f 6d2d 6865 6164 6572"));
  EXPECT_EQ(decode(decoder, hex("7e 03 6e6577")), (Pairs{{"custom-key", "new"}}));
  EXPECT_EQ(dynamic_entries(decoder, 1), (Pairs{{"custom-key", "new"}}));
}

// --- Malformed blocks ----------------------------------------------------------------------------

TEST(Hpack, RefusesMalformedBlocks) {
  const auto refuses = [](std::string_view block) {
    HpackDecoder decoder;
    return refused(decoder, block);
  };
  EXPECT_TRUE(refuses(hex("80")));                   // index 0
  EXPECT_TRUE(refuses(hex("be")));                   // index 62, an empty dynamic table
  EXPECT_TRUE(refuses(hex("ff 80 80 01")));          // index 127 + 16384
  EXPECT_TRUE(refuses(hex("7e 00")));                // a literal named by index 62, empty table
  EXPECT_TRUE(refuses(hex("40 00")));                // a literal with its value missing
  EXPECT_TRUE(refuses(hex("040c 2f73 616d 706c")));  // value length 12, 4 bytes there
  EXPECT_TRUE(refuses(hex("00 7f")));                // name length runs past the end
  EXPECT_TRUE(refuses(hex("ff")));                   // integer missing its continuation
  EXPECT_TRUE(refuses(hex("ff ff")));                // continuation bit set on the last byte
  EXPECT_TRUE(refuses(hex("ff ffffffff 0f")));       // an integer above 2^32
  EXPECT_TRUE(refuses(hex("ff 8080808080808080808000")));  // 11 continuation bytes
  EXPECT_TRUE(refuses(hex("3fe21f")));                     // size update to 4097
  EXPECT_TRUE(refuses(hex("0481 18")));                    // value Huffman-coded with zero padding
  EXPECT_TRUE(refuses(hex("0484 ffff ffff")));             // value holding EOS

  // Ten continuation bytes, even of zeros, are still an integer: a size update to 31 here.
  HpackDecoder decoder;
  EXPECT_EQ(decode(decoder, hex("3f 808080808080808080 00 82")), (Pairs{{":method", "GET"}}));
}

TEST(Hpack, RefusesAHeaderListOverTheLimit) {
  // C.3.1's list: (7+3) + (7+4) + (5+1) + (10+15) bytes, plus 32 for each of the four: 180.
  const std::string block = hex("8286 8441 0f77 7777 2e65 7861 6d70 6c65 2e63 6f6d");
  HpackDecoder fits;
  EXPECT_EQ(decode(fits, block, 180), kRequest1);
  HpackDecoder over;
  EXPECT_TRUE(refused(over, block, 179));
}

// --- Encoder -------------------------------------------------------------------------------------

TEST(Hpack, EncoderRoundTripsThroughTheDecoder) {
  const Pairs headers = {{":status", "200"},
                         {":status", "404"},
                         {"content-type", "application/grpc"},
                         {"grpc-status", "0"},
                         {"grpc-message", std::string(300, 'm')},
                         {":path", "/inference.GRPCInferenceService/ModelInfer"},
                         {"te", "trailers"},
                         {"empty", ""}};
  std::string block;
  for (const auto& [name, value] : headers) encode_header(name, value, block);
  HpackDecoder decoder;
  EXPECT_EQ(decode(decoder, block), headers);
  EXPECT_EQ(decoder.dynamic_table_size(), 0u);  // nothing was indexed
}

TEST(Hpack, EncoderBytes) {
  std::string out;
  encode_header(":status", "200", out);
  EXPECT_EQ(out, hex("88"));
  // content-type is static index 31: 4-bit prefix 15, then 16; "application/grpc" is 16 bytes.
  out.clear();
  encode_header("content-type", "application/grpc", out);
  EXPECT_EQ(out, hex("0f10 10") + "application/grpc");
  // :path is index 4 (its first entry); the RFC's C.2.2 bytes exactly.
  out.clear();
  encode_header(":path", "/sample/path", out);
  EXPECT_EQ(out, hex("040c 2f73 616d 706c 652f 7061 7468"));
  // A name not in the static table: 00, then the name as a literal.
  out.clear();
  encode_header("te", "trailers", out);
  EXPECT_EQ(out, hex("00 02") + "te" + hex("08") + "trailers");
}

}  // namespace
}  // namespace onepass::http2
