#include "http2/huffman.h"

#include <vector>

namespace onepass::http2 {
namespace {

constexpr std::size_t kEos = 256;

// RFC 7541 Appendix B, symbols 0 to 256 in order, four to a line: {code right-aligned, length}.
// clang-format off
constexpr std::array<HuffmanCode, 257> kCodes = {{
    {0x1ff8, 13}, {0x7fffd8, 23}, {0xfffffe2, 28}, {0xfffffe3, 28},             //   0
    {0xfffffe4, 28}, {0xfffffe5, 28}, {0xfffffe6, 28}, {0xfffffe7, 28},         //   4
    {0xfffffe8, 28}, {0xffffea, 24}, {0x3ffffffc, 30}, {0xfffffe9, 28},         //   8
    {0xfffffea, 28}, {0x3ffffffd, 30}, {0xfffffeb, 28}, {0xfffffec, 28},        //  12
    {0xfffffed, 28}, {0xfffffee, 28}, {0xfffffef, 28}, {0xffffff0, 28},         //  16
    {0xffffff1, 28}, {0xffffff2, 28}, {0x3ffffffe, 30}, {0xffffff3, 28},        //  20
    {0xffffff4, 28}, {0xffffff5, 28}, {0xffffff6, 28}, {0xffffff7, 28},         //  24
    {0xffffff8, 28}, {0xffffff9, 28}, {0xffffffa, 28}, {0xffffffb, 28},         //  28
    {0x14, 6}, {0x3f8, 10}, {0x3f9, 10}, {0xffa, 12},                           //  32 ' ' ! " #
    {0x1ff9, 13}, {0x15, 6}, {0xf8, 8}, {0x7fa, 11},                            //  36 $ % & '
    {0x3fa, 10}, {0x3fb, 10}, {0xf9, 8}, {0x7fb, 11},                           //  40 ( ) * +
    {0xfa, 8}, {0x16, 6}, {0x17, 6}, {0x18, 6},                                 //  44 , - . /
    {0x0, 5}, {0x1, 5}, {0x2, 5}, {0x19, 6},                                    //  48 0 1 2 3
    {0x1a, 6}, {0x1b, 6}, {0x1c, 6}, {0x1d, 6},                                 //  52 4 5 6 7
    {0x1e, 6}, {0x1f, 6}, {0x5c, 7}, {0xfb, 8},                                 //  56 8 9 : ;
    {0x7ffc, 15}, {0x20, 6}, {0xffb, 12}, {0x3fc, 10},                          //  60 < = > ?
    {0x1ffa, 13}, {0x21, 6}, {0x5d, 7}, {0x5e, 7},                              //  64 @ A B C
    {0x5f, 7}, {0x60, 7}, {0x61, 7}, {0x62, 7},                                 //  68 D E F G
    {0x63, 7}, {0x64, 7}, {0x65, 7}, {0x66, 7},                                 //  72 H I J K
    {0x67, 7}, {0x68, 7}, {0x69, 7}, {0x6a, 7},                                 //  76 L M N O
    {0x6b, 7}, {0x6c, 7}, {0x6d, 7}, {0x6e, 7},                                 //  80 P Q R S
    {0x6f, 7}, {0x70, 7}, {0x71, 7}, {0x72, 7},                                 //  84 T U V W
    {0xfc, 8}, {0x73, 7}, {0xfd, 8}, {0x1ffb, 13},                              //  88 X Y Z [
    {0x7fff0, 19}, {0x1ffc, 13}, {0x3ffc, 14}, {0x22, 6},                       //  92 \ ] ^ _
    {0x7ffd, 15}, {0x3, 5}, {0x23, 6}, {0x4, 5},                                //  96 ` a b c
    {0x24, 6}, {0x5, 5}, {0x25, 6}, {0x26, 6},                                  // 100 d e f g
    {0x27, 6}, {0x6, 5}, {0x74, 7}, {0x75, 7},                                  // 104 h i j k
    {0x28, 6}, {0x29, 6}, {0x2a, 6}, {0x7, 5},                                  // 108 l m n o
    {0x2b, 6}, {0x76, 7}, {0x2c, 6}, {0x8, 5},                                  // 112 p q r s
    {0x9, 5}, {0x2d, 6}, {0x77, 7}, {0x78, 7},                                  // 116 t u v w
    {0x79, 7}, {0x7a, 7}, {0x7b, 7}, {0x7ffe, 15},                              // 120 x y z {
    {0x7fc, 11}, {0x3ffd, 14}, {0x1ffd, 13}, {0xffffffc, 28},                   // 124 | } ~
    {0xfffe6, 20}, {0x3fffd2, 22}, {0xfffe7, 20}, {0xfffe8, 20},                // 128
    {0x3fffd3, 22}, {0x3fffd4, 22}, {0x3fffd5, 22}, {0x7fffd9, 23},             // 132
    {0x3fffd6, 22}, {0x7fffda, 23}, {0x7fffdb, 23}, {0x7fffdc, 23},             // 136
    {0x7fffdd, 23}, {0x7fffde, 23}, {0xffffeb, 24}, {0x7fffdf, 23},             // 140
    {0xffffec, 24}, {0xffffed, 24}, {0x3fffd7, 22}, {0x7fffe0, 23},             // 144
    {0xffffee, 24}, {0x7fffe1, 23}, {0x7fffe2, 23}, {0x7fffe3, 23},             // 148
    {0x7fffe4, 23}, {0x1fffdc, 21}, {0x3fffd8, 22}, {0x7fffe5, 23},             // 152
    {0x3fffd9, 22}, {0x7fffe6, 23}, {0x7fffe7, 23}, {0xffffef, 24},             // 156
    {0x3fffda, 22}, {0x1fffdd, 21}, {0xfffe9, 20}, {0x3fffdb, 22},              // 160
    {0x3fffdc, 22}, {0x7fffe8, 23}, {0x7fffe9, 23}, {0x1fffde, 21},             // 164
    {0x7fffea, 23}, {0x3fffdd, 22}, {0x3fffde, 22}, {0xfffff0, 24},             // 168
    {0x1fffdf, 21}, {0x3fffdf, 22}, {0x7fffeb, 23}, {0x7fffec, 23},             // 172
    {0x1fffe0, 21}, {0x1fffe1, 21}, {0x3fffe0, 22}, {0x1fffe2, 21},             // 176
    {0x7fffed, 23}, {0x3fffe1, 22}, {0x7fffee, 23}, {0x7fffef, 23},             // 180
    {0xfffea, 20}, {0x3fffe2, 22}, {0x3fffe3, 22}, {0x3fffe4, 22},              // 184
    {0x7ffff0, 23}, {0x3fffe5, 22}, {0x3fffe6, 22}, {0x7ffff1, 23},             // 188
    {0x3ffffe0, 26}, {0x3ffffe1, 26}, {0xfffeb, 20}, {0x7fff1, 19},             // 192
    {0x3fffe7, 22}, {0x7ffff2, 23}, {0x3fffe8, 22}, {0x1ffffec, 25},            // 196
    {0x3ffffe2, 26}, {0x3ffffe3, 26}, {0x3ffffe4, 26}, {0x7ffffde, 27},         // 200
    {0x7ffffdf, 27}, {0x3ffffe5, 26}, {0xfffff1, 24}, {0x1ffffed, 25},          // 204
    {0x7fff2, 19}, {0x1fffe3, 21}, {0x3ffffe6, 26}, {0x7ffffe0, 27},            // 208
    {0x7ffffe1, 27}, {0x3ffffe7, 26}, {0x7ffffe2, 27}, {0xfffff2, 24},          // 212
    {0x1fffe4, 21}, {0x1fffe5, 21}, {0x3ffffe8, 26}, {0x3ffffe9, 26},           // 216
    {0xffffffd, 28}, {0x7ffffe3, 27}, {0x7ffffe4, 27}, {0x7ffffe5, 27},         // 220
    {0xfffec, 20}, {0xfffff3, 24}, {0xfffed, 20}, {0x1fffe6, 21},               // 224
    {0x3fffe9, 22}, {0x1fffe7, 21}, {0x1fffe8, 21}, {0x7ffff3, 23},             // 228
    {0x3fffea, 22}, {0x3fffeb, 22}, {0x1ffffee, 25}, {0x1ffffef, 25},           // 232
    {0xfffff4, 24}, {0xfffff5, 24}, {0x3ffffea, 26}, {0x7ffff4, 23},            // 236
    {0x3ffffeb, 26}, {0x7ffffe6, 27}, {0x3ffffec, 26}, {0x3ffffed, 26},         // 240
    {0x7ffffe7, 27}, {0x7ffffe8, 27}, {0x7ffffe9, 27}, {0x7ffffea, 27},         // 244
    {0x7ffffeb, 27}, {0xffffffe, 28}, {0x7ffffec, 27}, {0x7ffffed, 27},         // 248
    {0x7ffffee, 27}, {0x7ffffef, 27}, {0x7fffff0, 27}, {0x3ffffee, 26},         // 252
    {0x3fffffff, 30},                                                           // 256 EOS
}};
// clang-format on

// One step of the decoder: from a state (a node of the code tree strictly inside it, the root
// being state 0), read four bits. At most one symbol ends in those four bits, because the
// shortest code is five bits long.
struct Step {
  std::uint8_t next;    // the state after the four bits
  std::uint8_t symbol;  // the byte that ended in them, when kEmits
  std::uint8_t flags;
};
constexpr std::uint8_t kEmits = 1;
constexpr std::uint8_t kFails = 2;  // the bits complete EOS, which a string must never hold
// The string may end after these bits: they stopped at the root, or on a node whose path from
// the root is at most 7 ones, which is valid padding.
constexpr std::uint8_t kMayEnd = 4;

struct DecodeTable {
  Step steps[256][16];
};

// Builds the state machine from kCodes: first the code tree (257 leaves, so 256 inner nodes, each
// a state), then the result of each state's 16 possible nibbles.
DecodeTable build_decode_table() {
  struct Node {
    int child[2] = {-1, -1};
    int symbol = -1;  // a leaf's symbol; -1 for an inner node
    int state = -1;   // an inner node's state number
    int depth = 0;
    bool all_ones = true;  // the path from the root is ones only
  };
  std::vector<Node> nodes(1);
  for (std::size_t symbol = 0; symbol < kCodes.size(); ++symbol) {
    int at = 0;
    for (int bit = kCodes[symbol].bits - 1; bit >= 0; --bit) {
      const int branch = (kCodes[symbol].code >> bit) & 1;
      if (nodes[at].child[branch] < 0) {
        Node child;
        child.depth = nodes[at].depth + 1;
        child.all_ones = nodes[at].all_ones && branch == 1;
        nodes[at].child[branch] = static_cast<int>(nodes.size());
        nodes.push_back(child);
      }
      at = nodes[at].child[branch];
    }
    nodes[at].symbol = static_cast<int>(symbol);
  }
  std::vector<int> inner;  // node numbers by state
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    if (nodes[i].symbol < 0) {
      nodes[i].state = static_cast<int>(inner.size());
      inner.push_back(static_cast<int>(i));
    }
  }

  DecodeTable table{};
  for (std::size_t state = 0; state < inner.size() && state < 256; ++state) {
    for (int nibble = 0; nibble < 16; ++nibble) {
      Step step{};
      int at = inner[state];
      for (int bit = 3; bit >= 0; --bit) {
        at = nodes[at].child[(nibble >> bit) & 1];
        // A complete code has no missing branch; treat one as an invalid string all the same.
        if (at < 0 || nodes[at].symbol == static_cast<int>(kEos)) {
          step.flags = kFails;
          at = 0;
          break;
        }
        if (nodes[at].symbol >= 0) {
          step.symbol = static_cast<std::uint8_t>(nodes[at].symbol);
          step.flags |= kEmits;
          at = 0;
        }
      }
      step.next = static_cast<std::uint8_t>(nodes[at].state);
      if (at == 0 || (nodes[at].all_ones && nodes[at].depth <= 7)) step.flags |= kMayEnd;
      table.steps[state][nibble] = step;
    }
  }
  return table;
}

const DecodeTable& decode_table() {
  static const DecodeTable table = build_decode_table();
  return table;
}

}  // namespace

const std::array<HuffmanCode, 257>& huffman_codes() { return kCodes; }

bool huffman_decode(std::string_view in, std::string& out) {
  const DecodeTable& table = decode_table();
  std::uint8_t state = 0;
  bool may_end = true;  // an empty string is valid
  for (const char c : in) {
    const auto byte = static_cast<std::uint8_t>(c);
    for (const int nibble : {byte >> 4, byte & 0xf}) {
      const Step& step = table.steps[state][nibble];
      if (step.flags & kFails) return false;
      if (step.flags & kEmits) out.push_back(static_cast<char>(step.symbol));
      state = step.next;
      may_end = (step.flags & kMayEnd) != 0;
    }
  }
  return may_end;
}

std::size_t huffman_encoded_size(std::string_view in) {
  std::size_t bits = 0;
  for (const char c : in) bits += kCodes[static_cast<std::uint8_t>(c)].bits;
  return (bits + 7) / 8;
}

void huffman_encode(std::string_view in, std::string& out) {
  out.reserve(out.size() + huffman_encoded_size(in));
  // Bits waiting to be written, right-aligned; fewer than 8 between symbols, so a 30-bit code
  // still fits.
  std::uint64_t pending = 0;
  int pending_bits = 0;
  for (const char c : in) {
    const HuffmanCode& code = kCodes[static_cast<std::uint8_t>(c)];
    pending = (pending << code.bits) | code.code;
    pending_bits += code.bits;
    while (pending_bits >= 8) {
      pending_bits -= 8;
      out.push_back(static_cast<char>((pending >> pending_bits) & 0xff));
    }
  }
  if (pending_bits > 0) {
    // Pad with ones, the most significant bits of EOS.
    const int pad = 8 - pending_bits;
    out.push_back(static_cast<char>(((pending << pad) | ((1u << pad) - 1)) & 0xff));
  }
}

}  // namespace onepass::http2
