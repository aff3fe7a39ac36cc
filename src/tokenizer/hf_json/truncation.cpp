// Truncation; see truncation.h.
#include "tokenizer/hf_json/truncation.h"

#include <algorithm>

#include "base/error.h"

namespace onepass::tokenizer::hf_json {
namespace {

template <typename T>
void keep(std::vector<T>& v, std::size_t begin, std::size_t end) {
  v = std::vector<T>(v.begin() + static_cast<std::ptrdiff_t>(begin),
                     v.begin() + static_cast<std::ptrdiff_t>(end));
}

}  // namespace

void truncate_encoding(Encoding& e, std::size_t max_len, TruncationDirection direction) {
  const std::size_t n = e.size();
  if (max_len >= n) return;
  const std::size_t begin = direction == TruncationDirection::kRight ? 0 : n - max_len;
  const std::size_t end = begin + max_len;
  keep(e.ids, begin, end);
  keep(e.type_ids, begin, end);
  keep(e.tokens, begin, end);
  keep(e.offsets, begin, end);
  keep(e.special_tokens_mask, begin, end);
  keep(e.word_ids, begin, end);
}

void truncate_encodings(Encoding& first, std::optional<Encoding>& second, std::size_t max_length,
                        TruncationStrategy strategy, TruncationDirection direction) {
  if (max_length == 0) {
    truncate_encoding(first, 0, direction);
    if (second) truncate_encoding(*second, 0, direction);
    return;
  }
  const std::size_t total = first.size() + (second ? second->size() : 0);
  if (total <= max_length) return;
  const std::size_t to_remove = total - max_length;

  switch (strategy) {
    case TruncationStrategy::kLongestFirst: {
      if (!second) {
        truncate_encoding(first, total - to_remove, direction);
        return;
      }
      // The shorter text keeps what it has when the longer one can absorb the cut; otherwise
      // both get half (the first text the smaller half of an odd budget when it is shorter).
      std::size_t n1 = first.size();
      std::size_t n2 = second->size();
      const bool swap = n1 > n2;
      if (swap) std::swap(n1, n2);
      n2 = n1 > max_length ? n1 : std::max(n1, max_length - n1);
      if (n1 + n2 > max_length) {
        n1 = max_length / 2;
        n2 = n1 + max_length % 2;
      }
      if (swap) std::swap(n1, n2);
      truncate_encoding(first, n1, direction);
      truncate_encoding(*second, n2, direction);
      return;
    }
    case TruncationStrategy::kOnlyFirst:
    case TruncationStrategy::kOnlySecond: {
      Encoding* target = &first;
      if (strategy == TruncationStrategy::kOnlySecond) {
        if (!second)
          throw Error(ErrorKind::kInvalidInput,
                      "truncation only_second needs a text pair, but only one text was given");
        target = &*second;
      }
      const std::size_t len = target->size();
      if (len <= to_remove)
        throw Error(
            ErrorKind::kInvalidInput,
            std::string("cannot truncate to max_length with ") +
                (strategy == TruncationStrategy::kOnlyFirst ? "only_first" : "only_second") +
                ": that text has " + std::to_string(len) + " tokens and " +
                std::to_string(to_remove) + " must go");
      truncate_encoding(*target, len - to_remove, direction);
      return;
    }
  }
}

}  // namespace onepass::tokenizer::hf_json
