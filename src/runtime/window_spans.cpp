#include "runtime/window_spans.h"

#include <algorithm>

#include "base/error.h"

namespace onepass::runtime {

std::vector<std::pair<std::size_t, std::size_t>> window_spans(std::size_t length, std::size_t room,
                                                              std::size_t stride) {
  ONEPASS_CHECK(room > 0 && stride < room, "a window advances by at least one token");
  std::vector<std::pair<std::size_t, std::size_t>> spans;
  const std::size_t step = room - stride;
  for (std::size_t begin = 0;; begin += step) {
    const std::size_t end = std::min(begin + room, length);
    spans.emplace_back(begin, end);
    if (end >= length) break;
  }
  return spans;
}

std::size_t leading_special_tokens(const tokenizer::Encoding& full) {
  std::size_t n = 0;
  while (n < full.ids.size() && n < full.special_tokens_mask.size() &&
         full.special_tokens_mask[n] != 0)
    ++n;
  return n;
}

std::size_t trailing_special_tokens(const tokenizer::Encoding& full) {
  const std::size_t total = std::min(full.ids.size(), full.special_tokens_mask.size());
  std::size_t n = 0;
  while (n < total && full.special_tokens_mask[total - 1 - n] != 0) ++n;
  return n;
}

}  // namespace onepass::runtime
