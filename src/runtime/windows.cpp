#include "runtime/windows.h"

#include <string>

#include "base/error.h"

namespace onepass::runtime {

std::size_t default_stride(std::size_t room) { return room / 8; }

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

std::vector<PreparedItem> split_into_windows(const tokenizer::Encoding& full,
                                             std::size_t first_tokens, std::size_t limit,
                                             std::optional<std::size_t> stride,
                                             bool keep_type_ids) {
  const std::size_t total = full.ids.size();
  ONEPASS_CHECK(first_tokens <= total, "the first text is part of the encoding");
  const std::size_t frame = total - first_tokens;  // special tokens and the second text
  if (frame >= limit) {
    throw Error(ErrorKind::kInvalidInput,
                "the special tokens and the second text take " + std::to_string(frame) +
                    " of the " + std::to_string(limit) +
                    " tokens of a window, leaving no room for the first text; shorten the "
                    "second text");
  }
  const std::size_t room = limit - frame;
  const std::size_t overlap = stride.value_or(default_stride(room));
  if (overlap >= room) {
    throw Error(ErrorKind::kInvalidInput, "stride " + std::to_string(overlap) +
                                              " must be smaller than the " + std::to_string(room) +
                                              " tokens of the text each window holds");
  }
  // The first text starts after the leading special tokens ([CLS], <s>).
  std::size_t prefix = 0;
  while (prefix < total && prefix < full.special_tokens_mask.size() &&
         full.special_tokens_mask[prefix] != 0)
    ++prefix;
  ONEPASS_CHECK(prefix + first_tokens <= total, "the first text follows the leading specials");
  const std::size_t first_end = prefix + first_tokens;

  std::vector<PreparedItem> windows;
  for (const auto& [begin, end] : window_spans(first_tokens, room, overlap)) {
    PreparedItem window;
    auto take = [&](const std::vector<std::int32_t>& from, std::vector<std::int32_t>& to) {
      to.reserve(frame + end - begin);
      to.insert(to.end(), from.begin(), from.begin() + static_cast<std::ptrdiff_t>(prefix));
      to.insert(to.end(), from.begin() + static_cast<std::ptrdiff_t>(prefix + begin),
                from.begin() + static_cast<std::ptrdiff_t>(prefix + end));
      to.insert(to.end(), from.begin() + static_cast<std::ptrdiff_t>(first_end), from.end());
    };
    take(full.ids, window.input_ids);
    if (keep_type_ids && full.type_ids.size() == total) take(full.type_ids, window.token_type_ids);
    windows.push_back(std::move(window));
  }
  return windows;
}

void combine_windows(ItemOutput& out) {
  ONEPASS_CHECK(!out.windows.empty(), "a chunked input has windows");
  const std::size_t width = out.windows.front().values.size();
  std::vector<double> sum(width, 0.0);
  double weight = 0;
  out.num_tokens = 0;
  for (const WindowOutput& window : out.windows) {
    ONEPASS_CHECK(window.values.size() == width, "every window has the same output width");
    const double w = window.num_tokens;
    for (std::size_t i = 0; i < width; ++i) sum[i] += w * window.values[i];
    weight += w;
    out.num_tokens += window.num_tokens;
  }
  out.values.resize(width);
  for (std::size_t i = 0; i < width; ++i) out.values[i] = static_cast<float>(sum[i] / weight);
}

}  // namespace onepass::runtime
