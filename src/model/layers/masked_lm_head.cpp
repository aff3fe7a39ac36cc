#include "model/layers/masked_lm_head.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>

#include "kernels/elementwise.h"

namespace onepass::model {
namespace {

// Rows of the [rows, vocab] logits block: 64 x a 30522-token vocabulary is 7.8 MB of scratch.
constexpr std::int64_t kBlockRows = 64;

// Where one head row's logits go: the SPLADE row of sequence `seq`, or row `position_row` of
// out.position_logits.
struct RowTarget {
  std::size_t token;  // row of x
  std::size_t seq;
  std::int64_t position_row;  // -1: SPLADE
};

}  // namespace

MaskedLmHead::MaskedLmHead(const weights::WeightStore& store, const MaskedLmHeadNames& names,
                           kernels::Activation act, double norm_eps, const float* word_embeddings,
                           std::int64_t vocab, std::int64_t hidden, std::int64_t width)
    : vocab_(vocab), hidden_(hidden), width_(width > 0 ? width : hidden) {
  const std::string transform(names.transform);
  const std::string norm(names.norm);
  transform_ = kernels::Linear(
      store.get(transform + ".weight", {width_, hidden}).data,
      names.transform_bias ? store.get(transform + ".bias", {width_}).data : nullptr, width_,
      hidden, act);
  norm_ = {store.get(norm + ".weight", {width_}).data,
           names.norm_bias ? store.get(norm + ".bias", {width_}).data : nullptr,
           static_cast<float>(norm_eps)};
  decoder_ = kernels::Linear(
      names.decoder != nullptr && store.contains(names.decoder)
          ? store.get(names.decoder, {vocab, width_}).data
          : word_embeddings,
      names.decoder_bias != nullptr ? store.get(names.decoder_bias, {vocab}).data : nullptr, vocab,
      width_);
}

void MaskedLmHead::forward(const float* x, const std::size_t* offsets,
                           std::span<const SequenceInput> batch, tensor::ScratchArena& arena,
                           ForwardOutput& out) const {
  const std::size_t num_seqs = batch.size();
  const auto vocab = static_cast<std::size_t>(vocab_);
  const auto hidden = static_cast<std::size_t>(hidden_);

  // The rows the head needs: every token of a SPLADE sequence, the named positions of the
  // others.
  std::vector<RowTarget> rows;
  std::int64_t positions = 0;
  bool any_splade = false;
  for (std::size_t s = 0; s < num_seqs; ++s) {
    const auto& wanted = batch[s].vocab_logit_positions;
    if (wanted.empty()) {
      any_splade = true;
      for (std::size_t t = offsets[s]; t < offsets[s + 1]; ++t) rows.push_back({t, s, -1});
    } else {
      for (const std::int32_t p : wanted)
        rows.push_back({offsets[s] + static_cast<std::size_t>(p), s, positions++});
    }
  }

  // log1p(relu(.)) never decreases, so the max of it over the tokens is it of the logits' max:
  // the SPLADE rows keep only a running max, and the logarithm runs once per entry.
  out.logits.assign(num_seqs * vocab, any_splade ? -std::numeric_limits<float>::infinity() : 0.0f);
  out.position_logits.resize(static_cast<std::size_t>(positions) * vocab);

  const auto total = static_cast<std::int64_t>(rows.size());
  const std::size_t block_rows = static_cast<std::size_t>(std::min(total, kBlockRows));
  float* gathered = arena.alloc(block_rows * hidden);
  float* transformed = arena.alloc(block_rows * static_cast<std::size_t>(width_));
  float* logits = arena.alloc(block_rows * vocab);
  for (std::int64_t begin = 0; begin < total; begin += kBlockRows) {
    const std::int64_t n = std::min(kBlockRows, total - begin);
    for (std::int64_t r = 0; r < n; ++r) {
      const float* row = x + rows[static_cast<std::size_t>(begin + r)].token * hidden;
      std::memcpy(gathered + static_cast<std::size_t>(r) * hidden, row, hidden * sizeof(float));
    }
    transform_.forward(gathered, n, transformed);
    kernels::layer_norm(transformed, n, width_, norm_.gamma, norm_.beta, norm_.eps);
    decoder_.forward(transformed, n, logits);
    for (std::int64_t r = 0; r < n; ++r) {
      const RowTarget& target = rows[static_cast<std::size_t>(begin + r)];
      const float* row = logits + static_cast<std::size_t>(r) * vocab;
      if (target.position_row >= 0) {
        std::copy(
            row, row + vocab,
            out.position_logits.data() + static_cast<std::size_t>(target.position_row) * vocab);
        continue;
      }
      float* pooled = out.logits.data() + target.seq * vocab;
      for (std::size_t v = 0; v < vocab; ++v) pooled[v] = std::max(pooled[v], row[v]);
    }
  }
  if (!any_splade) return;
  for (std::size_t s = 0; s < num_seqs; ++s) {
    float* pooled = out.logits.data() + s * vocab;
    // relu before log1p: log1p of a logit below -1 would be NaN. A fill-mask row stays 0.
    if (batch[s].vocab_logit_positions.empty()) {
      for (std::size_t v = 0; v < vocab; ++v) pooled[v] = std::log1p(std::max(pooled[v], 0.0f));
    } else {
      std::fill(pooled, pooled + vocab, 0.0f);
    }
  }
}

}  // namespace onepass::model
