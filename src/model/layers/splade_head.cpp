#include "model/layers/splade_head.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "kernels/elementwise.h"

namespace onepass::model {
namespace {

// Rows of the [rows, vocab] logits block: 64 x a 30522-token vocabulary is 7.8 MB of scratch.
constexpr std::int64_t kBlockRows = 64;

}  // namespace

SpladeHead::SpladeHead(const weights::WeightStore& store, const SpladeHeadNames& names,
                       kernels::Activation act, double norm_eps, const float* word_embeddings,
                       std::int64_t vocab, std::int64_t hidden)
    : transform_(load_linear(store, names.transform, hidden, hidden, act)),
      norm_(load_layer_norm(store, names.norm, hidden, norm_eps)),
      decoder_(store.contains(names.decoder) ? store.get(names.decoder, {vocab, hidden}).data
                                             : word_embeddings,
               store.get(names.decoder_bias, {vocab}).data, vocab, hidden),
      vocab_(vocab),
      hidden_(hidden) {}

void SpladeHead::forward(const float* x, const std::size_t* offsets, std::size_t num_seqs,
                         tensor::ScratchArena& arena, std::vector<float>& out) const {
  const auto tokens = static_cast<std::int64_t>(offsets[num_seqs]);
  const auto vocab = static_cast<std::size_t>(vocab_);
  float* transformed = arena.alloc(static_cast<std::size_t>(tokens * hidden_));
  transform_.forward(x, tokens, transformed);
  kernels::layer_norm(transformed, tokens, hidden_, norm_.gamma, norm_.beta, norm_.eps);

  // log1p(relu(.)) never decreases, so the max of it over the tokens is it of the logits' max:
  // the vocabulary loop keeps only a running max, and the logarithm runs once per entry.
  out.assign(num_seqs * vocab, -std::numeric_limits<float>::infinity());
  float* logits = arena.alloc(static_cast<std::size_t>(std::min(tokens, kBlockRows)) * vocab);
  std::size_t seq = 0;
  for (std::int64_t begin = 0; begin < tokens; begin += kBlockRows) {
    const std::int64_t rows = std::min(kBlockRows, tokens - begin);
    decoder_.forward(transformed + begin * hidden_, rows, logits);
    for (std::int64_t r = 0; r < rows; ++r) {
      const auto token = static_cast<std::size_t>(begin + r);
      while (token >= offsets[seq + 1]) ++seq;
      const float* row = logits + static_cast<std::size_t>(r) * vocab;
      float* pooled = out.data() + seq * vocab;
      for (std::size_t v = 0; v < vocab; ++v) pooled[v] = std::max(pooled[v], row[v]);
    }
  }
  // relu before log1p: log1p of a logit below -1 would be NaN.
  for (float& v : out) v = std::log1p(std::max(v, 0.0f));
}

}  // namespace onepass::model
