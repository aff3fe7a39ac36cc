#include "reference/attention_reference.h"

#include <algorithm>
#include <cmath>

namespace onepass::testing::deberta_ref {
namespace {

// make_log_bucket_position, element-wise as torch evaluates it (float32 tensors).
long log_bucket(long rel, int bucket_size, int max_position) {
  const long sign = (rel > 0) - (rel < 0);
  const long mid = bucket_size / 2;
  const long abs_pos = (rel < mid && rel > -mid) ? mid - 1 : std::labs(rel);
  const float log_pos =
      std::ceil(std::log(static_cast<float>(abs_pos) / static_cast<float>(mid)) /
                std::log(static_cast<float>(static_cast<double>(max_position - 1) / mid)) *
                static_cast<float>(mid - 1)) +
      static_cast<float>(mid);
  const float bucket =
      abs_pos <= mid ? static_cast<float>(rel) : log_pos * static_cast<float>(sign);
  return static_cast<long>(bucket);
}

float dot(const float* a, const float* b, int n) {
  double s = 0;
  for (int t = 0; t < n; ++t) s += static_cast<double>(a[t]) * b[t];
  return static_cast<float>(s);
}

}  // namespace

std::vector<long> build_relative_position(int seq_len, int bucket_size, int max_position) {
  std::vector<long> rel(static_cast<std::size_t>(seq_len) * seq_len);
  for (int i = 0; i < seq_len; ++i) {
    for (int j = 0; j < seq_len; ++j) {
      long r = i - j;  // q_ids[:, None] - k_ids[None, :]
      if (bucket_size > 0 && max_position > 0) r = log_bucket(r, bucket_size, max_position);
      rel[static_cast<std::size_t>(i) * seq_len + j] = r;
    }
  }
  return rel;
}

std::vector<float> attention_head(const AttentionSetup& setup, int seq_len, int head_size,
                                  const std::vector<float>& q, const std::vector<float>& k,
                                  const std::vector<float>& v, const std::vector<float>& pos_key,
                                  const std::vector<float>& pos_query) {
  const int n = seq_len;
  const int d = head_size;
  const int att_span =
      setup.position_buckets > 0 ? setup.position_buckets : setup.max_relative_positions;
  const int rows = 2 * att_span;
  const int scale_factor =
      1 + (setup.listed_terms >= 0 ? setup.listed_terms : int(setup.c2p) + int(setup.p2c));
  const float scale = std::sqrt(static_cast<float>(d) * static_cast<float>(scale_factor));
  const auto rel = build_relative_position(n, setup.position_buckets, setup.max_relative_positions);
  const auto at = [n](int i, int j) { return static_cast<std::size_t>(i) * n + j; };

  // attention_scores = bmm(query, key^T / scale)
  std::vector<float> scores(static_cast<std::size_t>(n) * n);
  std::vector<float> k_scaled(k.size());
  for (std::size_t t = 0; t < k.size(); ++t) k_scaled[t] = k[t] / scale;
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) scores[at(i, j)] = dot(&q[i * d], &k_scaled[j * d], d);

  std::vector<float> score(static_cast<std::size_t>(n) * n, 0.0f);
  if (setup.c2p) {
    // c2p_att = bmm(query, pos_key^T): [L, 2 att_span], gathered at clamp(rel + span).
    std::vector<float> c2p_att(static_cast<std::size_t>(n) * rows);
    for (int i = 0; i < n; ++i)
      for (int r = 0; r < rows; ++r) c2p_att[i * rows + r] = dot(&q[i * d], &pos_key[r * d], d);
    for (int i = 0; i < n; ++i) {
      for (int j = 0; j < n; ++j) {
        const long pos = std::clamp<long>(rel[at(i, j)] + att_span, 0, rows - 1);
        score[at(i, j)] += c2p_att[i * rows + pos] / scale;
      }
    }
  }
  if (setup.p2c) {
    // p2c_att = bmm(key, pos_query^T), gathered at clamp(-r_pos + span), then transposed.
    std::vector<float> p2c_att(static_cast<std::size_t>(n) * rows);
    for (int a = 0; a < n; ++a)
      for (int r = 0; r < rows; ++r) p2c_att[a * rows + r] = dot(&k[a * d], &pos_query[r * d], d);
    std::vector<float> gathered(static_cast<std::size_t>(n) * n);
    for (int a = 0; a < n; ++a) {
      for (int b = 0; b < n; ++b) {
        const long pos = std::clamp<long>(-rel[at(a, b)] + att_span, 0, rows - 1);
        gathered[at(a, b)] = p2c_att[a * rows + pos];
      }
    }
    for (int i = 0; i < n; ++i)
      for (int j = 0; j < n; ++j) score[at(i, j)] += gathered[at(j, i)] / scale;
  }
  for (std::size_t t = 0; t < scores.size(); ++t) scores[t] += score[t];

  // Softmax per query row (no masked entries: every token is real), then probs . value.
  std::vector<float> out(static_cast<std::size_t>(n) * d);
  for (int i = 0; i < n; ++i) {
    double mx = -INFINITY;
    for (int j = 0; j < n; ++j) mx = std::max<double>(mx, scores[at(i, j)]);
    std::vector<double> p(n);
    double sum = 0;
    for (int j = 0; j < n; ++j) sum += p[j] = std::exp(scores[at(i, j)] - mx);
    for (int c = 0; c < d; ++c) {
      double acc = 0;
      for (int j = 0; j < n; ++j) acc += p[j] / sum * v[j * d + c];
      out[i * d + c] = static_cast<float>(acc);
    }
  }
  return out;
}

}  // namespace onepass::testing::deberta_ref
