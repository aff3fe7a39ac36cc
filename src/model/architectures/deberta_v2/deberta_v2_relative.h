// DeBERTa-v2 relative positions (Hugging Face make_log_bucket_position / build_relative_position)
// as index tables over the distance between two tokens. The attention reads the row of the
// projected relative embeddings it needs from these tables, so no [L, L] position tensor and no
// [L, L, d] gather ever exist.
#pragma once

#include <vector>

namespace onepass::model::deberta_v2 {

// make_log_bucket_position for one relative position, in the float32 arithmetic torch uses
// (the ceil() of a float32 log ratio decides the bucket, so the rounding must match).
// Requires bucket_size >= 2.
int log_bucket_position(int relative_pos, int bucket_size, int max_position);

// build_relative_position for query i and key j (relative_pos = i - j): log-bucketed when both
// bucket_size and max_position are positive, the plain distance otherwise.
int relative_position(int relative_pos, int bucket_size, int max_position);

// The rows of rel_embeddings (after slicing to 2 * att_span) that c2p and p2c read, for every
// distance a sequence of at most max_len tokens can have. Immutable after construction: shared
// by all threads.
class RelativeIndex {
 public:
  // position_buckets <= 0 disables bucketing; max_relative_positions must already be resolved
  // (HF replaces a value < 1 by max_position_embeddings).
  RelativeIndex(int position_buckets, int max_relative_positions, int max_len);

  // HF's att_span / pos_ebd_size: position_buckets if > 0, else max_relative_positions.
  int att_span() const { return att_span_; }
  int max_len() const { return max_len_; }

  // c2p: query i reads pos_key row clamp(rel(i - j) + att_span, 0, 2 att_span - 1) for key j.
  int c2p(int i_minus_j) const { return c2p_[max_len_ - 1 - i_minus_j]; }
  // p2c: HF gathers p2c_att[j, clamp(-rel(j - i) + att_span)] and transposes, so score (i, j)
  // reads key j against pos_query row p2c(j - i).
  int p2c(int j_minus_i) const { return p2c_[j_minus_i + max_len_ - 1]; }

  // Both rows for score (i, j) as tables indexed by j - i + max_len - 1 (length 2 max_len - 1):
  // along a row of scores they are read forwards, so 16 keys take one vector load.
  const int* c2p_by_key_offset() const { return c2p_.data(); }
  const int* p2c_by_key_offset() const { return p2c_.data(); }
  // p2c(j - i) indexed by i - j + max_len - 1: read forwards along a row of keys (fixed j).
  const int* p2c_by_query_offset() const { return p2c_by_query_.data(); }

 private:
  int att_span_ = 0;
  int max_len_ = 0;
  std::vector<int> c2p_;           // [j - i + max_len - 1] -> c2p(i - j)
  std::vector<int> p2c_;           // [j - i + max_len - 1] -> p2c(j - i)
  std::vector<int> p2c_by_query_;  // [i - j + max_len - 1] -> p2c(j - i)
};

}  // namespace onepass::model::deberta_v2
