// Every fast kernel against its naive twin in kernels/reference on random data.
#include <gtest/gtest.h>
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "base/error.h"
#include "kernels/attention.h"
#include "kernels/elementwise.h"
#include "kernels/matmul.h"
#include "kernels/reference/reference.h"
#include "kernels/small_gemm_bf16.h"
#include "random_values.h"

namespace onepass::kernels {
namespace {

void expect_close(const std::vector<float>& a, const std::vector<float>& b, float tol) {
  ASSERT_EQ(a.size(), b.size());
  float worst = 0.0f;
  for (std::size_t i = 0; i < a.size(); ++i) worst = std::max(worst, std::abs(a[i] - b[i]));
  EXPECT_LE(worst, tol);
}

class LinearTest : public ::testing::TestWithParam<Activation> {};

TEST_P(LinearTest, MatchesReferenceForRaggedRowCountsOnOnePrimitive) {
  const Activation act = GetParam();
  const std::int64_t in = 48, out = 40;
  const auto w = random_vector(out * in, 1, 0.3f), b = random_vector(out, 2);
  const Linear linear(w.data(), b.data(), out, in, act);
  for (const std::int64_t rows : {1, 7, 33, 130}) {
    const auto x = random_vector(rows * in, 3 + rows);
    std::vector<float> y(rows * out), expected(rows * out);
    linear.forward(x.data(), rows, y.data());
    reference::linear(x.data(), rows, in, w.data(), b.data(), out, act, false, expected.data());
    expect_close(y, expected, 2e-5f);

    auto residual = random_vector(rows * out, 99);
    auto expected_acc = residual;
    linear.forward(x.data(), rows, residual.data(), /*accumulate=*/true);
    reference::linear(x.data(), rows, in, w.data(), b.data(), out, act, true, expected_acc.data());
    expect_close(residual, expected_acc, 2e-5f);
  }
}

INSTANTIATE_TEST_SUITE_P(Activations, LinearTest,
                         ::testing::Values(Activation::kIdentity, Activation::kGeluErf,
                                           Activation::kGeluTanh, Activation::kRelu,
                                           Activation::kTanh, Activation::kSilu,
                                           Activation::kQuickGelu));

TEST(Linear, RowsAreBitIdenticalWhateverTheRowCount) {
  // Batch invariance rests on this: a row computed alone equals the same row inside a big call.
  const std::int64_t in = 64, out = 192, total = 100;
  const auto w = random_vector(out * in, 20), b = random_vector(out, 21),
             x = random_vector(total * in, 22);
  for (const bool accumulate : {false, true}) {
    const Linear linear(w.data(), b.data(), out, in, Activation::kGeluErf);
    std::vector<float> full(total * out, 0.5f);
    linear.forward(x.data(), total, full.data(), accumulate);
    for (const std::int64_t rows : {1, 3, 15, 16, 17, 40}) {
      for (const std::int64_t first : {0, 9, 55}) {
        std::vector<float> part(rows * out, 0.5f);
        linear.forward(x.data() + first * in, rows, part.data(), accumulate);
        for (std::int64_t i = 0; i < rows * out; ++i)
          ASSERT_EQ(part[i], full[first * out + i]) << rows << " rows";
      }
    }
  }
}

TEST(Linear, StridedInputAndNoBias) {
  const std::int64_t in = 16, out = 8, rows = 5, ldx = 40;
  const auto w = random_vector(out * in, 4);
  const auto x = random_vector(rows * ldx, 5);
  const Linear linear(w.data(), nullptr, out, in, Activation::kIdentity, ldx);
  std::vector<float> y(rows * out), expected(rows * out);
  linear.forward(x.data(), rows, y.data());
  std::vector<float> packed(rows * in);
  for (std::int64_t r = 0; r < rows; ++r) {
    for (std::int64_t c = 0; c < in; ++c) packed[r * in + c] = x[r * ldx + c];
  }
  reference::linear(packed.data(), rows, in, w.data(), nullptr, out, Activation::kIdentity, false,
                    expected.data());
  expect_close(y, expected, 1e-5f);
}

TEST(Gemm, AllTransposeCombinations) {
  const std::int64_t m = 9, n = 7, k = 11;
  for (const bool ta : {false, true}) {
    for (const bool tb : {false, true}) {
      const auto a = random_vector(m * k, 6), b = random_vector(k * n, 7);
      std::vector<float> c(m * n, 1.0f);
      gemm(ta, tb, m, n, k, 0.5f, a.data(), ta ? m : k, b.data(), tb ? k : n, 2.0f, c.data(), n);
      for (std::int64_t i = 0; i < m; ++i) {
        for (std::int64_t j = 0; j < n; ++j) {
          double acc = 0.0;
          for (std::int64_t p = 0; p < k; ++p) {
            acc += static_cast<double>(ta ? a[p * m + i] : a[i * k + p]) *
                   (tb ? b[j * k + p] : b[p * n + j]);
          }
          EXPECT_NEAR(c[i * n + j], 0.5 * acc + 2.0, 1e-5);
        }
      }
    }
  }
}

TEST(Elementwise, LayerNormMatchesReference) {
  const std::int64_t rows = 37, cols = 64;
  auto x = random_vector(rows * cols, 8, 3.0f);
  auto expected = x;
  const auto gamma = random_vector(cols, 9), beta = random_vector(cols, 10);
  layer_norm(x.data(), rows, cols, gamma.data(), beta.data(), 1e-12f);
  reference::layer_norm(expected.data(), rows, cols, gamma.data(), beta.data(), 1e-12f);
  expect_close(x, expected, 1e-5f);
}

// LayerNorm(bias=False) (ModernBERT): a null beta is exactly a zero one, tail lanes included.
TEST(Elementwise, LayerNormWithoutBiasIsAZeroBias) {
  const std::int64_t rows = 5, cols = 70;
  const auto input = random_vector(rows * cols, 11, 3.0f);
  const auto gamma = random_vector(cols, 12);
  const std::vector<float> zeros(cols, 0.0f);
  auto x = input, with_zeros = input;
  layer_norm(x.data(), rows, cols, gamma.data(), nullptr, 1e-5f);
  layer_norm(with_zeros.data(), rows, cols, gamma.data(), zeros.data(), 1e-5f);
  expect_close(x, with_zeros, 0.0f);
}

TEST(Elementwise, ActivationsMatchReference) {
  for (const auto act : {Activation::kGeluErf, Activation::kGeluTanh, Activation::kRelu,
                         Activation::kTanh, Activation::kSilu, Activation::kQuickGelu}) {
    auto x = random_vector(20000, 11, 6.0f);  // above the threading threshold
    std::vector<float> expected(x.size());
    for (std::size_t i = 0; i < x.size(); ++i) expected[i] = reference::activation(x[i], act);
    activate(x.data(), static_cast<std::int64_t>(x.size()), act);
    expect_close(x, expected, 2e-6f);
  }
  // Exact-erf GELU, hand-computed: gelu(1) = 0.5 * (1 + erf(1/sqrt 2)) = 0.8413447.
  float one = 1.0f;
  activate(&one, 1, Activation::kGeluErf);
  EXPECT_NEAR(one, 0.8413447f, 1e-6f);
}

TEST(Elementwise, SoftmaxRowsMatchesReference) {
  auto x = random_vector(13 * 50, 12, 20.0f);
  auto expected = x;
  softmax_rows(x.data(), 13, 50);
  reference::softmax_rows(expected.data(), 13, 50);
  expect_close(x, expected, 1e-6f);
}

TEST(Elementwise, MultiplyMatchesReference) {
  const std::int64_t n = (1 << 14) + 5;  // past the parallel threshold, with a ragged end
  auto x = random_vector(n, 18, 2.0f);
  auto expected = x;
  const auto y = random_vector(n, 19, 2.0f);
  multiply(x.data(), y.data(), n);
  reference::multiply(expected.data(), y.data(), n);
  expect_close(x, expected, 0.0f);
}

TEST(Elementwise, EmbeddingGather) {
  const auto table = random_vector(10 * 6, 13);
  const std::vector<std::int32_t> ids{3, 0, 9, 3};
  std::vector<float> out(4 * 6, 0.0f), expected(4 * 6, 0.0f);
  embedding_gather(table.data(), 6, ids.data(), 4, out.data(), false);
  embedding_gather(table.data(), 6, ids.data(), 4, out.data(), true);
  reference::embedding_gather(table.data(), 6, ids.data(), 4, expected.data(), false);
  reference::embedding_gather(table.data(), 6, ids.data(), 4, expected.data(), true);
  expect_close(out, expected, 0.0f);
  EXPECT_EQ(out[6 + 2], 2.0f * table[2]);
}

TEST(Attention, RaggedBatchMatchesReference) {
  const std::int64_t heads = 4, d = 16, hidden = heads * d, ld = 3 * hidden;
  const std::vector<std::size_t> offsets{0, 1, 9, 40, 41, 70};
  const auto tokens = static_cast<std::int64_t>(offsets.back());
  const auto qkv = random_vector(tokens * ld, 14, 2.0f);
  std::vector<float> ctx(tokens * hidden), expected(tokens * hidden);
  std::vector<float> scratch(self_attention_scratch_floats(offsets.data(), offsets.size() - 1));
  const float scale = 1.0f / std::sqrt(static_cast<float>(d));
  self_attention(qkv.data(), qkv.data() + hidden, qkv.data() + 2 * hidden,
                 AttentionShape{heads, d, ld}, offsets.data(), offsets.size() - 1, scale,
                 ctx.data(), scratch.data());
  reference::self_attention(qkv.data(), qkv.data() + hidden, qkv.data() + 2 * hidden, ld, heads, d,
                            offsets.data(), offsets.size() - 1, scale, expected.data());
  expect_close(ctx, expected, 1e-5f);
}

// MPNet's relative position bias: one table entry per (head, key offset from the query), shared
// by every sequence of the batch however long.
TEST(Attention, DistanceBiasMatchesReference) {
  const std::int64_t heads = 4, d = 16, hidden = heads * d, ld = 3 * hidden;
  const std::vector<std::size_t> offsets{0, 1, 9, 40, 41, 70};
  const auto tokens = static_cast<std::int64_t>(offsets.back());
  const std::int64_t longest = 31;
  const auto qkv = random_vector(tokens * ld, 14, 2.0f);
  const auto table = random_vector(heads * (2 * longest - 1), 15, 3.0f);
  std::vector<float> ctx(tokens * hidden), expected(tokens * hidden), unbiased(tokens * hidden);
  std::vector<float> scratch(self_attention_scratch_floats(offsets.data(), offsets.size() - 1));
  const float scale = 1.0f / std::sqrt(static_cast<float>(d));
  AttentionShape shape{heads, d, ld};
  shape.distance_bias = DistanceBias{table.data(), 2 * longest - 1, longest - 1};
  self_attention(qkv.data(), qkv.data() + hidden, qkv.data() + 2 * hidden, shape, offsets.data(),
                 offsets.size() - 1, scale, ctx.data(), scratch.data());
  reference::self_attention(
      qkv.data(), qkv.data() + hidden, qkv.data() + 2 * hidden, ld, heads, d, offsets.data(),
      offsets.size() - 1, scale, expected.data(),
      [&](std::int64_t h, std::int64_t i, std::int64_t j) {
        return table[static_cast<std::size_t>(h * (2 * longest - 1) + (longest - 1) + j - i)];
      });
  expect_close(ctx, expected, 1e-5f);
  // The bias matters: without it the result is far from the biased reference.
  reference::self_attention(qkv.data(), qkv.data() + hidden, qkv.data() + 2 * hidden, ld, heads, d,
                            offsets.data(), offsets.size() - 1, scale, unbiased.data());
  float apart = 0.0f;
  for (std::size_t i = 0; i < ctx.size(); ++i)
    apart = std::max(apart, std::abs(unbiased[i] - expected[i]));
  EXPECT_GT(apart, 0.1f);
}

// ModernBERT's local layers: a query sees keys within `window` of it. Only the band is computed
// (blocks of 64 query rows over their keys); the reference masks the full score matrix with the
// float minimum, as transformers does. Sequences shorter than, as long as, and much longer than
// a block plus the window on both sides, a last block that is cut short, and a window of 0.
TEST(Attention, LocalWindowMatchesMaskedReference) {
  const std::int64_t heads = 2, d = 16, hidden = heads * d, ld = 3 * hidden;
  const std::vector<std::size_t> offsets{0, 5, 85, 385, 386, 516};
  const auto tokens = static_cast<std::int64_t>(offsets.back());
  const auto qkv = random_vector(tokens * ld, 16, 2.0f);
  std::vector<float> scratch(self_attention_scratch_floats(offsets.data(), offsets.size() - 1));
  const float scale = 1.0f / std::sqrt(static_cast<float>(d));
  for (const std::int64_t window : {0, 8, 64}) {
    SCOPED_TRACE(window);
    std::vector<float> ctx(tokens * hidden), expected(tokens * hidden);
    AttentionShape shape{heads, d, ld};
    shape.window = window;
    self_attention(qkv.data(), qkv.data() + hidden, qkv.data() + 2 * hidden, shape, offsets.data(),
                   offsets.size() - 1, scale, ctx.data(), scratch.data());
    reference::self_attention(
        qkv.data(), qkv.data() + hidden, qkv.data() + 2 * hidden, ld, heads, d, offsets.data(),
        offsets.size() - 1, scale, expected.data(),
        [&](std::int64_t, std::int64_t i, std::int64_t j) {
          return std::abs(j - i) <= window ? 0.0f : std::numeric_limits<float>::lowest();
        });
    expect_close(ctx, expected, 1e-5f);
  }
}

// Sequences past 1024 tokens run in blocks of query rows over every key: the same answer as the
// reference (which computes whole score matrices), in a scratch that grows with the length
// rather than its square.
TEST(Attention, LongSequencesInRowBlocksMatchReference) {
  const std::int64_t heads = 2, d = 8, hidden = heads * d, ld = 3 * hidden;
  const std::vector<std::size_t> offsets{0, 3, 2503, 3530};  // 2500 tokens: 3 blocks; 1027: 2
  const auto tokens = static_cast<std::int64_t>(offsets.back());
  const auto qkv = random_vector(tokens * ld, 17, 2.0f);
  const std::size_t scratch_floats =
      self_attention_scratch_floats(offsets.data(), offsets.size() - 1);
  const auto threads = static_cast<std::size_t>(std::max(1, omp_get_max_threads()));
  EXPECT_EQ(scratch_floats, threads * 1024 * 2500);
  std::vector<float> scratch(scratch_floats);
  const float scale = 1.0f / std::sqrt(static_cast<float>(d));
  // 700: bands on the 2500-token sequence, masked full blocks on the 1027-token one.
  for (const std::int64_t window : {-1, 700}) {
    SCOPED_TRACE(window);
    std::vector<float> ctx(tokens * hidden), expected(tokens * hidden);
    AttentionShape shape{heads, d, ld};
    shape.window = window;
    self_attention(qkv.data(), qkv.data() + hidden, qkv.data() + 2 * hidden, shape, offsets.data(),
                   offsets.size() - 1, scale, ctx.data(), scratch.data());
    reference::self_attention(qkv.data(), qkv.data() + hidden, qkv.data() + 2 * hidden, ld, heads,
                              d, offsets.data(), offsets.size() - 1, scale, expected.data(),
                              [&](std::int64_t, std::int64_t i, std::int64_t j) {
                                return window < 0 || std::abs(j - i) <= window
                                           ? 0.0f
                                           : std::numeric_limits<float>::lowest();
                              });
    expect_close(ctx, expected, 1e-5f);
  }
}

// The bf16 precision's attention: near the fp32 reference (bf16 operands, fp32 sums), really in
// bf16 (not bit-equal to it), and a sequence's result independent of its batch companions.
TEST(Attention, Bf16ProductsStayNearReferenceAndBatchInvariant) {
  if (!has_bf16_gemm()) GTEST_SKIP() << "built without AVX512-BF16";
  const std::int64_t heads = 4, d = 16, hidden = heads * d, ld = 3 * hidden;
  const std::vector<std::size_t> offsets{0, 1, 9, 40, 41, 70};
  const auto tokens = static_cast<std::int64_t>(offsets.back());
  const auto qkv = random_vector(tokens * ld, 14, 2.0f);
  std::vector<float> ctx(tokens * hidden), expected(tokens * hidden);
  std::vector<float> scratch(self_attention_scratch_floats(offsets.data(), offsets.size() - 1));
  const float scale = 1.0f / std::sqrt(static_cast<float>(d));
  const AttentionShape shape{heads, d, ld, /*bf16_products=*/true};
  self_attention(qkv.data(), qkv.data() + hidden, qkv.data() + 2 * hidden, shape, offsets.data(),
                 offsets.size() - 1, scale, ctx.data(), scratch.data());
  reference::self_attention(qkv.data(), qkv.data() + hidden, qkv.data() + 2 * hidden, ld, heads, d,
                            offsets.data(), offsets.size() - 1, scale, expected.data());
  float worst = 0.0f;
  for (std::size_t i = 0; i < ctx.size(); ++i)
    worst = std::max(worst, std::abs(ctx[i] - expected[i]));
  EXPECT_LT(worst, 2e-2f);  // observed 6.3e-3 with these inputs (|q|, |k|, |v| up to 2)
  EXPECT_GT(worst, 1e-5f);
  // The third sequence (tokens 9..39) alone.
  const std::vector<std::size_t> alone{0, 31};
  std::vector<float> one(31 * hidden);
  self_attention(qkv.data() + 9 * ld, qkv.data() + 9 * ld + hidden,
                 qkv.data() + 9 * ld + 2 * hidden, shape, alone.data(), 1, scale, one.data(),
                 scratch.data());
  for (std::int64_t i = 0; i < 31 * hidden; ++i) ASSERT_EQ(one[i], ctx[9 * hidden + i]) << i;
}

TEST(Activation, HfNames) {
  EXPECT_EQ(activation_from_hf("gelu"), Activation::kGeluErf);
  EXPECT_EQ(activation_from_hf("gelu_new"), Activation::kGeluTanh);
  EXPECT_EQ(activation_from_hf("gelu_pytorch_tanh"), Activation::kGeluTanh);
  EXPECT_EQ(activation_from_hf("relu"), Activation::kRelu);
  EXPECT_THROW(activation_from_hf("mish"), Error);
}

}  // namespace
}  // namespace onepass::kernels
