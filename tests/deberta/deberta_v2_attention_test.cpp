// Fast DeBERTa-v2 relative positions and disentangled attention against hand-computed bucket
// values and the naive Hugging Face transcription in reference/attention_reference.cpp.
#include "model/architectures/deberta_v2/deberta_v2_attention.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <ostream>
#include <random>
#include <vector>

#include "kernels/quantize.h"
#include "kernels/small_gemm_bf16.h"
#include "model/architectures/deberta_v2/deberta_v2_relative.h"
#include "reference/attention_reference.h"

namespace onepass::model::deberta_v2 {
namespace {

namespace ref = onepass::testing::deberta_ref;

void naive_nt(int m, int n, int k, const float* a, int lda, const float* b, int ldb, float* c,
              int ldc) {
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < n; ++j) {
      float s = 0;
      for (int t = 0; t < k; ++t) s += a[i * lda + t] * b[j * ldb + t];
      c[i * ldc + j] = s;
    }
}

void naive_nn(int m, int n, int k, const float* a, int lda, const float* b, int ldb, float* c,
              int ldc) {
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < n; ++j) {
      float s = 0;
      for (int t = 0; t < k; ++t) s += a[i * lda + t] * b[t * ldb + j];
      c[i * ldc + j] = s;
    }
}

void naive_softmax(int m, int n, float* x, int ldx) {
  for (int i = 0; i < m; ++i) {
    float* row = x + i * ldx;
    const float mx = *std::max_element(row, row + n);
    float sum = 0;
    for (int j = 0; j < n; ++j) sum += row[j] = std::exp(row[j] - mx);
    for (int j = 0; j < n; ++j) row[j] /= sum;
  }
}

constexpr Gemm kNaiveGemm{naive_nt, naive_nn, naive_softmax};

// The bf16 precision's products, naively: operands rounded to bf16 by the library's converter,
// sums in double. Packed tables are read back word by word.
float to_bf16(float x) {
  std::uint16_t bits = 0;
  kernels::convert_rows_to_bf16(&x, 1, 1, 1, &bits);
  return kernels::bf16_to_float(bits);
}

void naive_nt_bf16(int m, int n, int k, const float* a, int lda, const float* b, int ldb, float* c,
                   int ldc) {
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < n; ++j) {
      double s = 0;
      for (int t = 0; t < k; ++t) s += double(to_bf16(a[i * lda + t])) * to_bf16(b[j * ldb + t]);
      c[i * ldc + j] = static_cast<float>(s);
    }
}

void naive_nn_bf16(int m, int n, int k, const float* a, int lda, const float* b, int ldb, float* c,
                   int ldc) {
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < n; ++j) {
      double s = 0;
      for (int t = 0; t < k; ++t) s += double(to_bf16(a[i * lda + t])) * to_bf16(b[t * ldb + j]);
      c[i * ldc + j] = static_cast<float>(s);
    }
}

void naive_nn_pairs(int m, int n, int k, const float* a, int lda, const std::uint32_t* bp, int ldp,
                    float* c, int ldc) {
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < n; ++j) {
      double s = 0;
      for (int t = 0; t < k; ++t) {
        const std::uint32_t word = bp[(t / 2) * ldp + j];
        const auto half = static_cast<std::uint16_t>(t % 2 == 0 ? word & 0xffffu : word >> 16);
        s += double(to_bf16(a[i * lda + t])) * kernels::bf16_to_float(half);
      }
      c[i * ldc + j] = static_cast<float>(s);
    }
}

constexpr Gemm kNaiveBf16Gemm{naive_nt_bf16, naive_nn_bf16, naive_softmax, naive_nn_pairs};

// The kernels the model binds for bf16 (deberta_v2.cpp), with the naive softmax.
constexpr Gemm kKernelBf16Gemm{
    [](int m, int n, int k, const float* a, int lda, const float* b, int ldb, float* c, int ldc) {
      kernels::gemm_bf16(true, m, n, k, 1.0f, a, lda, b, ldb, c, ldc);
    },
    [](int m, int n, int k, const float* a, int lda, const float* b, int ldb, float* c, int ldc) {
      kernels::gemm_bf16(false, m, n, k, 1.0f, a, lda, b, ldb, c, ldc);
    },
    naive_softmax,
    [](int m, int n, int k, const float* a, int lda, const std::uint32_t* bp, int ldp, float* c,
       int ldc) { kernels::small_gemm_bf16(m, n, k, 1.0f, a, lda, bp, ldp, c, ldc); }};

TEST(DebertaV2Relative, LogBucketsMatchHandComputedValues) {
  // ceil(log(|r| / mid) / log((max - 1) / mid) * (mid - 1)) + mid, worked out by hand.
  EXPECT_EQ(log_bucket_position(0, 256, 512), 0);
  EXPECT_EQ(log_bucket_position(-127, 256, 512), -127);
  EXPECT_EQ(log_bucket_position(128, 256, 512), 128);
  EXPECT_EQ(log_bucket_position(129, 256, 512), 129);
  EXPECT_EQ(log_bucket_position(200, 256, 512), 169);
  EXPECT_EQ(log_bucket_position(-200, 256, 512), -169);
  EXPECT_EQ(log_bucket_position(511, 256, 512), 255);  // log ratio exactly 1
  EXPECT_EQ(log_bucket_position(-511, 256, 512), -255);
  EXPECT_EQ(log_bucket_position(600, 256, 512), 270);  // beyond max: clamped later
  EXPECT_EQ(log_bucket_position(17, 32, 512), 17);
  EXPECT_EQ(log_bucket_position(40, 32, 512), 20);
  EXPECT_EQ(log_bucket_position(100, 32, 512), 24);
  EXPECT_EQ(log_bucket_position(-300, 32, 512), -29);
  EXPECT_EQ(log_bucket_position(511, 32, 512), 31);
  EXPECT_EQ(log_bucket_position(10, 8, 20), 6);
  EXPECT_EQ(log_bucket_position(25, 8, 20), 8);
  EXPECT_EQ(relative_position(-300, -1, 512), -300);  // no bucketing
}

TEST(DebertaV2Relative, IndexMatchesDenseRelativePositions) {
  for (const auto& [buckets, max_rel] :
       {std::pair{32, 512}, {256, 512}, {-1, 512}, {-1, 24}, {8, 20}, {16, 40}}) {
    const int len = 70;
    const RelativeIndex index(buckets, max_rel, len);
    const int span = buckets > 0 ? buckets : max_rel;
    ASSERT_EQ(index.att_span(), span);
    const auto rel = ref::build_relative_position(len, buckets, max_rel);
    for (int i = 0; i < len; ++i) {
      for (int j = 0; j < len; ++j) {
        const long r = rel[i * len + j];
        EXPECT_EQ(index.c2p(i - j), std::clamp<long>(r + span, 0, 2 * span - 1));
        // p2c_pos[j][i] uses build_relative_position's (j, i) entry.
        EXPECT_EQ(index.p2c(j - i), std::clamp<long>(-rel[j * len + i] + span, 0, 2 * span - 1));
      }
    }
  }
}

struct Case {
  int buckets;
  int max_rel;
  bool c2p;
  bool p2c;
  int seq_len;
  int head_size;
};

void PrintTo(const Case& c, std::ostream* os) {
  *os << "buckets " << c.buckets << " max_rel " << c.max_rel << (c.c2p ? " c2p" : "")
      << (c.p2c ? " p2c" : "") << " L " << c.seq_len << " d " << c.head_size;
}

std::vector<float> random_vector(std::mt19937& rng, std::size_t n) {
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> v(n);
  for (auto& x : v) x = dist(rng);
  return v;
}

// Copies a dense [rows, cols] matrix into a strided buffer (columns offset..offset+cols of
// rows of width ld), so the fast path sees the strides it gets inside a packed batch.
std::vector<float> strided(const std::vector<float>& dense, int rows, int cols, int ld,
                           int offset) {
  std::vector<float> out(static_cast<std::size_t>(rows) * ld, NAN);
  for (int r = 0; r < rows; ++r)
    for (int c = 0; c < cols; ++c) out[r * ld + offset + c] = dense[r * cols + c];
  return out;
}

// A relative table [rows, d] as the model stores it: transposed, head 1 of 3 heads, rows padded
// to a stride of ld (dimension p of relative row r at out[(d + p) * ld + r]).
std::vector<float> transposed_head(const std::vector<float>& dense, int rows, int d, int ld) {
  std::vector<float> out(static_cast<std::size_t>(3 * d) * ld, NAN);
  for (int r = 0; r < rows; ++r)
    for (int p = 0; p < d; ++p) out[(d + p) * ld + r] = dense[r * d + p];
  return out;
}

// One case's random head (q, k, v and both relative tables) and the transcription's answer.
struct HeadInputs {
  HeadInputs(const Case& c, unsigned seed) : span(c.buckets > 0 ? c.buckets : c.max_rel) {
    std::mt19937 rng(seed + c.seq_len * 7 + c.buckets);
    const int n = c.seq_len;
    const int d = c.head_size;
    q = random_vector(rng, n * d);
    k = random_vector(rng, n * d);
    v = random_vector(rng, n * d);
    pk = random_vector(rng, 2 * span * d);
    pq = random_vector(rng, 2 * span * d);
    const ref::AttentionSetup setup{c.buckets, c.max_rel, c.c2p, c.p2c};
    expected = ref::attention_head(setup, n, d, q, k, v, pk, pq);
  }
  int span;
  std::vector<float> q, k, v, pk, pq, expected;
};

class DisentangledAttention : public ::testing::TestWithParam<Case> {};

TEST_P(DisentangledAttention, MatchesNaiveHuggingFaceTranscription) {
  const Case c = GetParam();
  const HeadInputs in(c, 1234);
  const int n = c.seq_len;
  const int d = c.head_size;
  const auto& [span, q, k, v, pk, pq, expected] = in;

  // Head 1 of a 3-head packed layout, as inside the model.
  const int ld = 3 * d;
  const auto qs = strided(q, n, d, ld, d);
  const auto ks = strided(k, n, d, ld, d);
  const auto vs = strided(v, n, d, ld, d);
  const int ld_pos = 2 * span + 3;
  const auto pks = transposed_head(pk, 2 * span, d, ld_pos);
  const auto pqs = transposed_head(pq, 2 * span, d, ld_pos);
  std::vector<float> out(static_cast<std::size_t>(n) * ld, NAN);
  const RelativeIndex index(c.buckets, c.max_rel, 130);
  std::vector<float> scratch(attention_scratch_floats(n, index), NAN);
  HeadView h;
  h.seq_len = n;
  h.head_size = d;
  h.q = qs.data() + d;
  h.ldq = ld;
  h.k = ks.data() + d;
  h.ldk = ld;
  h.v = vs.data() + d;
  h.ldv = ld;
  if (c.c2p) {
    h.pos_key_t = pks.data() + d * ld_pos;
    h.ld_pos_key_t = ld_pos;
  }
  if (c.p2c) {
    h.pos_query_t = pqs.data() + d * ld_pos;
    h.ld_pos_query_t = ld_pos;
  }
  h.out = out.data() + d;
  h.ldo = ld;
  const float scale = attention_scale(d, int(c.c2p) + int(c.p2c));
  disentangled_attention_head(h, index, scale, kNaiveGemm, scratch.data());
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < d; ++j)
      ASSERT_NEAR(out[i * ld + d + j], expected[i * d + j], 2e-5) << "token " << i << " dim " << j;
  // Columns of other heads are untouched.
  EXPECT_TRUE(std::isnan(out[0]));
  EXPECT_TRUE(std::isnan(out[2 * d]));
}

// The bf16 precision: relative tables packed as pairs (head 1 of 3, padded stride), products by
// the AVX512-BF16 kernels. They must equal the naive bf16 products up to fp32 summation (so the
// packing and the column windows are exact), and stay near the fp32 transcription.
TEST_P(DisentangledAttention, Bf16ProductsMatchNaiveBf16AndStayNearFp32) {
  if (!kernels::has_bf16_gemm()) GTEST_SKIP() << "built without AVX512-BF16";
  const Case c = GetParam();
  const HeadInputs in(c, 99);
  const int n = c.seq_len;
  const int d = c.head_size;
  const auto& [span, q, k, v, pk, pq, expected] = in;

  const int rows = 2 * span;
  const int ld_pairs = rows + 3;
  const auto pack = [&](const std::vector<float>& dense) {
    // Transposed [3 d, rows] table, then pairs of it: head 1 starts at pair row d / 2.
    std::vector<float> t(static_cast<std::size_t>(3 * d) * rows, 0.0f);
    for (int r = 0; r < rows; ++r)
      for (int p = 0; p < d; ++p) t[(d + p) * rows + r] = dense[r * d + p];
    std::vector<std::uint32_t> pairs(static_cast<std::size_t>(3 * d / 2) * ld_pairs, 0xffffffffu);
    EXPECT_TRUE(kernels::pack_bf16_pairs(t.data(), rows, 3 * d, rows, pairs.data(), ld_pairs));
    return pairs;
  };
  const auto pk_pairs = pack(pk);
  const auto pq_pairs = pack(pq);
  const RelativeIndex index(c.buckets, c.max_rel, 130);
  const float scale = attention_scale(d, int(c.c2p) + int(c.p2c));
  const auto run = [&](const Gemm& gemm) {
    std::vector<float> out(static_cast<std::size_t>(n) * d, NAN);
    std::vector<float> scratch(attention_scratch_floats(n, index), NAN);
    HeadView h;
    h.seq_len = n;
    h.head_size = d;
    h.q = q.data();
    h.k = k.data();
    h.v = v.data();
    h.ldq = h.ldk = h.ldv = h.ldo = d;
    if (c.c2p) {
      h.pos_key_pairs = pk_pairs.data() + (d / 2) * ld_pairs;
      h.ld_pos_key_pairs = ld_pairs;
    }
    if (c.p2c) {
      h.pos_query_pairs = pq_pairs.data() + (d / 2) * ld_pairs;
      h.ld_pos_query_pairs = ld_pairs;
    }
    h.out = out.data();
    disentangled_attention_head(h, index, scale, gemm, scratch.data());
    return out;
  };
  const auto fast = run(kKernelBf16Gemm);
  const auto naive = run(kNaiveBf16Gemm);
  double worst = 0;
  for (std::size_t i = 0; i < fast.size(); ++i) {
    ASSERT_NEAR(fast[i], naive[i], 1e-5) << "element " << i;
    worst = std::max(worst, std::abs(double(fast[i]) - expected[i]));
  }
  EXPECT_LT(worst, 5e-3);  // observed at most 2.2e-3 over these cases
  EXPECT_GT(worst, 0.0);   // the products really ran in bf16
}

INSTANTIATE_TEST_SUITE_P(
    Configs, DisentangledAttention,
    ::testing::Values(Case{32, 512, true, true, 70, 16},   // the fixture's layout
                      Case{256, 512, true, true, 130, 8},  // mDeBERTa's buckets
                      Case{8, 20, true, true, 130, 8},     // buckets saturate and clamp
                      Case{16, 40, true, false, 90, 16},   // c2p only
                      Case{16, 40, false, true, 90, 16},   // p2c only
                      Case{16, 40, false, false, 33, 16},  // relative positions unused
                      Case{-1, 512, true, true, 64, 16},   // no log buckets
                      Case{-1, 24, true, true, 100, 8},    // no buckets, distances clamp
                      Case{-1, 128, true, true, 1, 16},    // one token
                      Case{4, 10, true, true, 2, 4}));     // two tokens, tiny span

}  // namespace
}  // namespace onepass::model::deberta_v2
