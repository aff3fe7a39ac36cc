// Shared by the slow-tokenizer fuzz targets: turns fuzz bytes into an encode() call and checks
// what must hold for any input. Only onepass::Error(kInvalidInput) may come out (invalid UTF-8,
// a truncation that cannot be met); anything else aborts the run.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string_view>

#include "base/error.h"
#include "tokenizer/common/unicode.h"
#include "tokenizer/tokenizer.h"

namespace onepass::tokenizer::fuzzing {

inline void check(bool ok) {
  if (!ok) std::abort();
}

// Byte 0: bit 0 pair, bits 1-2 strategy, bit 3 left side, bit 4 no special tokens; byte 1:
// max_length (0 = no truncation); the rest is the text, split in two halves for a pair.
inline void encode_fuzz_input(const Tokenizer& tokenizer, const std::uint8_t* data,
                              std::size_t size) {
  if (size < 2) return;
  const std::uint8_t flags = data[0];
  TruncationOptions options;
  options.max_length = data[1];
  options.strategy = static_cast<TruncationStrategy>(((flags >> 1) & 3) % 3);
  options.direction = (flags & 8) ? TruncationDirection::kLeft : TruncationDirection::kRight;
  const bool add_special = (flags & 16) == 0;
  const std::string_view bytes(reinterpret_cast<const char*>(data + 2), size - 2);
  std::string_view text = bytes;
  std::optional<std::string_view> pair;
  if (flags & 1) {
    text = bytes.substr(0, bytes.size() / 2);
    pair = bytes.substr(bytes.size() / 2);
  }
  Encoding encoding;
  try {
    encoding = tokenizer.encode(text, pair, options, add_special);
  } catch (const Error& e) {
    check(e.kind() == ErrorKind::kInvalidInput);
    return;
  }
  const std::size_t n = encoding.ids.size();
  check(encoding.type_ids.size() == n && encoding.tokens.size() == n &&
        encoding.offsets.size() == n && encoding.special_tokens_mask.size() == n &&
        encoding.word_ids.size() == n);
  if (add_special) check(n >= tokenizer.num_special_tokens(pair.has_value()));
  if (options.max_length > 0 && add_special) check(n <= options.max_length);
  const std::size_t longest =
      std::max(unicode::decode_utf8(text).size(), pair ? unicode::decode_utf8(*pair).size() : 0);
  for (std::size_t i = 0; i < n; ++i) {
    check(encoding.ids[i] >= 0 &&
          static_cast<std::size_t>(encoding.ids[i]) < tokenizer.vocab_size());
    check(encoding.offsets[i].first <= encoding.offsets[i].second);
    check(encoding.offsets[i].second <= longest);
    check(encoding.type_ids[i] == 0 || encoding.type_ids[i] == 1);
    // Special tokens, and only they, have no word. With them a separator stands between the
    // two texts, and each text's words run 0, 1, 2, ... (from a later one when truncation cut
    // its start) with no gap or step back.
    check((encoding.word_ids[i] < 0) == (encoding.special_tokens_mask[i] != 0));
    if (add_special && encoding.word_ids[i] >= 0) {
      if (i > 0 && encoding.special_tokens_mask[i - 1] == 0) {
        const std::int32_t step = encoding.word_ids[i] - encoding.word_ids[i - 1];
        check(step == 0 || step == 1);
      } else if (options.max_length == 0 || options.direction == TruncationDirection::kRight) {
        check(encoding.word_ids[i] == 0);
      }
    }
  }
}

}  // namespace onepass::tokenizer::fuzzing
