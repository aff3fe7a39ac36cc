// Naive DeBERTa-v2 disentangled attention for one head, written as a literal transcription of
// Hugging Face v4.47.1 (DisentangledSelfAttention, build_relative_position,
// make_log_bucket_position): dense [L, L] relative positions, full [L, 2 att_span] products,
// torch.gather along the last axis and the p2c transposition. The oracle of the fast path;
// never used outside tests.
#pragma once

#include <vector>

namespace onepass::testing::deberta_ref {

struct AttentionSetup {
  int position_buckets = -1;
  int max_relative_positions = 512;  // resolved (>= 1)
  bool c2p = true;
  bool p2c = true;
  // Entries "c2p"/"p2c" of pos_att_type: HF's scale_factor counts them even when
  // relative_attention is off (then c2p and p2c above are false). -1: c2p + p2c.
  int listed_terms = -1;
};

// HF build_relative_position(L, L) with bucketing, as a dense [L, L] matrix (row-major).
std::vector<long> build_relative_position(int seq_len, int bucket_size, int max_position);

// One head. q, k, v: [L, d]; pos_key, pos_query: [2 att_span, d] (ignored when the term is
// off). Returns the context [L, d]. All row-major with no padding.
std::vector<float> attention_head(const AttentionSetup& setup, int seq_len, int head_size,
                                  const std::vector<float>& q, const std::vector<float>& k,
                                  const std::vector<float>& v, const std::vector<float>& pos_key,
                                  const std::vector<float>& pos_query);

}  // namespace onepass::testing::deberta_ref
