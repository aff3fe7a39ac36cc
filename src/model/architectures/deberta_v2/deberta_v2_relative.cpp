#include "model/architectures/deberta_v2/deberta_v2_relative.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>

#include "base/error.h"

namespace onepass::model::deberta_v2 {

int log_bucket_position(int relative_pos, int bucket_size, int max_position) {
  const int mid = bucket_size / 2;
  const int abs_pos = std::abs(relative_pos);
  // Inside (-mid, mid) HF substitutes mid - 1 before the log, and |pos| <= mid keeps the
  // position itself: both cases return it unchanged.
  if (abs_pos <= mid) return relative_pos;
  // torch: abs_pos / mid is a float32 tensor, torch.tensor((max_position - 1) / mid) is the
  // double quotient rounded to float32, every further step float32.
  const float ratio = static_cast<float>(abs_pos) / static_cast<float>(mid);
  const float base =
      static_cast<float>(static_cast<double>(max_position - 1) / static_cast<double>(mid));
  const float scaled = std::log(ratio) / std::log(base) * static_cast<float>(mid - 1);
  const float log_pos = std::ceil(scaled) + static_cast<float>(mid);
  const int magnitude = static_cast<int>(log_pos);  // .to(torch.long) truncates; log_pos > 0
  return relative_pos < 0 ? -magnitude : magnitude;
}

int relative_position(int relative_pos, int bucket_size, int max_position) {
  if (bucket_size > 0 && max_position > 0)
    return log_bucket_position(relative_pos, bucket_size, max_position);
  return relative_pos;
}

RelativeIndex::RelativeIndex(int position_buckets, int max_relative_positions, int max_len)
    : att_span_(position_buckets > 0 ? position_buckets : max_relative_positions),
      max_len_(max_len) {
  ONEPASS_CHECK(max_relative_positions >= 1, "max_relative_positions must be resolved");
  ONEPASS_CHECK(position_buckets <= 0 || position_buckets >= 2, "position_buckets is 1");
  ONEPASS_CHECK(max_len >= 1, "empty relative index");
  const int rows = 2 * att_span_;
  const auto clamp_row = [rows](int row) { return std::clamp(row, 0, rows - 1); };
  c2p_.resize(2 * static_cast<std::size_t>(max_len) - 1);
  p2c_.resize(c2p_.size());
  p2c_by_query_.resize(c2p_.size());
  for (int d = -(max_len - 1); d <= max_len - 1; ++d) {
    const int rel = relative_position(d, position_buckets, max_relative_positions);
    // rel is relative_position(d) for d = i - j (c2p) and for d = j - i (p2c).
    c2p_[max_len - 1 - d] = clamp_row(rel + att_span_);
    p2c_[d + max_len - 1] = clamp_row(-rel + att_span_);
    p2c_by_query_[max_len - 1 - d] = p2c_[d + max_len - 1];
  }
}

}  // namespace onepass::model::deberta_v2
