// Shared body of the tokenizer.json libFuzzer targets: arbitrary bytes as text (and, after a
// 0x1F byte, a pair), a truncation request from the first byte; onepass::Error is the only
// acceptable failure and every encoding must be self-consistent.
#pragma once

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string_view>

#include "base/error.h"
#include "tokenizer/sources.h"

namespace onepass::tokenizer::fuzz {

inline const Tokenizer& fixture_tokenizer(const char* relative) {
  static std::unique_ptr<Tokenizer> tok =
      load_tokenizer_json(std::filesystem::path(ONEPASS_TEST_DATA_DIR) / "fixtures" / relative);
  return *tok;
}

inline std::size_t count_code_points(std::string_view s) {
  std::size_t n = 0;
  for (unsigned char c : s) n += (c & 0xC0) != 0x80;
  return n;
}

inline void check_or_die(bool ok, const char* what) {
  if (!ok) {
    std::fprintf(stderr, "invariant broken: %s\n", what);
    std::abort();
  }
}

inline void fuzz_one(const Tokenizer& tok, const std::uint8_t* data, std::size_t size) {
  if (size == 0) return;
  TruncationOptions trunc;
  const std::uint8_t mode = data[0];
  if (mode & 0x80) {
    trunc.max_length = (mode & 0x3F) + 1;
    trunc.strategy = static_cast<TruncationStrategy>((mode >> 6) % 3 == 2 ? 2 : (mode & 1));
    trunc.direction = (mode & 2) ? TruncationDirection::kLeft : TruncationDirection::kRight;
  }
  std::string_view input(reinterpret_cast<const char*>(data + 1), size - 1);
  std::optional<std::string_view> pair;
  if (const auto cut = input.find('\x1F'); cut != std::string_view::npos) {
    pair = input.substr(cut + 1);
    input = input.substr(0, cut);
  }
  try {
    const Encoding e = tok.encode(input, pair, trunc, (mode & 4) == 0);
    check_or_die(e.type_ids.size() == e.size() && e.tokens.size() == e.size() &&
                     e.offsets.size() == e.size() && e.special_tokens_mask.size() == e.size() &&
                     e.word_ids.size() == e.size(),
                 "encoding fields have different lengths");
    for (std::size_t i = 0; i < e.size(); ++i) {
      // The post-processor's tokens, and only they, have no word.
      check_or_die((e.word_ids[i] < 0) == (e.special_tokens_mask[i] != 0),
                   "word id and special token mask disagree");
    }
    if (trunc.max_length > 0) check_or_die(e.size() <= trunc.max_length, "truncation exceeded");
    const std::size_t limit =
        std::max(count_code_points(input), pair ? count_code_points(*pair) : 0);
    for (const auto& [start, end] : e.offsets)
      check_or_die(start <= end && end <= limit, "offset outside the text");
  } catch (const Error&) {
    // Invalid UTF-8 and impossible truncation requests are expected errors.
  }
}

}  // namespace onepass::tokenizer::fuzz
