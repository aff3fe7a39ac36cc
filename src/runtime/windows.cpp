#include "runtime/windows.h"

#include <string>

#include "base/error.h"

namespace onepass::runtime {

std::size_t default_stride(std::size_t room) { return room / 8; }

std::vector<PreparedItem> split_into_windows(const tokenizer::Encoding& full, SplitText text,
                                             std::size_t limit, std::optional<std::size_t> stride,
                                             bool keep_type_ids, std::size_t max_windows) {
  const std::size_t total = full.ids.size();
  ONEPASS_CHECK(text.begin + text.count <= total, "the split text is part of the encoding");
  const std::size_t frame = total - text.count;  // special tokens and the other text
  if (frame >= limit) {
    // The first text is split unless it starts the encoding's content: then the second is.
    const bool first = text.begin == leading_special_tokens(full);
    throw Error(ErrorKind::kInvalidInput,
                "the special tokens and the " + std::string(first ? "second" : "first") +
                    " text take " + std::to_string(frame) + " of the " + std::to_string(limit) +
                    " tokens of a window, leaving no room for the " + (first ? "first" : "second") +
                    " text; shorten the " + (first ? "second" : "first") + " text");
  }
  const std::size_t room = limit - frame;
  const std::size_t overlap = stride.value_or(default_stride(room));
  if (overlap >= room) {
    throw Error(ErrorKind::kInvalidInput, "stride " + std::to_string(overlap) +
                                              " must be smaller than the " + std::to_string(room) +
                                              " tokens of the text each window holds");
  }
  const std::size_t text_end = text.begin + text.count;

  std::vector<PreparedItem> windows;
  for (const auto& [begin, end] : window_spans(text.count, room, overlap)) {
    if (max_windows != 0 && windows.size() == max_windows) break;
    PreparedItem window;
    auto take = [&](const std::vector<std::int32_t>& from, std::vector<std::int32_t>& to) {
      to.reserve(frame + end - begin);
      to.insert(to.end(), from.begin(), from.begin() + static_cast<std::ptrdiff_t>(text.begin));
      to.insert(to.end(), from.begin() + static_cast<std::ptrdiff_t>(text.begin + begin),
                from.begin() + static_cast<std::ptrdiff_t>(text.begin + end));
      to.insert(to.end(), from.begin() + static_cast<std::ptrdiff_t>(text_end), from.end());
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
