// HPACK's static Huffman code (RFC 7541 section 5.2, Appendix B): a header string literal with its
// H bit set is coded with it. Decoding runs a 4-bit-at-a-time state machine built once from the
// code table, so a string costs two table reads per byte and no allocation but the output's.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace onepass::http2 {

// Appends the decoding of `in` to `out`. False when `in` is not a valid Huffman string: it holds
// the EOS symbol, or its final padding is longer than 7 bits or not all ones (RFC 7541 5.2).
// On false, `out` may hold part of the decoding.
bool huffman_decode(std::string_view in, std::string& out);

// Appends `in` Huffman-coded, padded to a whole byte with the leading ones of EOS.
void huffman_encode(std::string_view in, std::string& out);

// The byte length huffman_encode would append for `in`.
std::size_t huffman_encoded_size(std::string_view in);

// One symbol's code, right-aligned in `code`, `bits` long.
struct HuffmanCode {
  std::uint32_t code;
  std::uint8_t bits;
};

// The code of every byte value and (index 256) of EOS, as RFC 7541 Appendix B gives them: exposed
// so that a test can check the transcription is the canonical code it must be.
const std::array<HuffmanCode, 257>& huffman_codes();

}  // namespace onepass::http2
