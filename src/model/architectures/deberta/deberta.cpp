// DeBERTa (v1: microsoft/deberta-base-mnli, deberta-large-mnli, cross-encoder/nli-deberta-base)
// as transformers v4.47.1 runs it (models/deberta/modeling_deberta.py), on the DeBERTa-v2
// encoder: the same embeddings, disentangled attention (c2p / p2c over relative distances, no
// buckets), layers and heads under the same names. What differs is how a layer stores its
// attention, read here into v2's layout:
//   in_proj.weight [3 hidden, hidden], no bias: transpose_for_scores splits its output per head
//     into [query | key | value] of head_size each, so head h's query rows are
//     3 h head_size + [0, head_size), its key rows the next head_size, its value rows the next;
//   q_bias and v_bias [hidden] (the key has none);
//   pos_proj (c2p's keys, no bias) and pos_q_proj (p2c's queries, with bias) for the relative
//     embeddings, never shared with the content projections.
// v1's "talking heads" (talking_head: head_logits_proj / head_weights_proj) are refused; no
// released checkpoint sets it.
#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>

#include "base/error.h"
#include "model/architectures/architectures.h"
#include "model/architectures/deberta/deberta_config.h"
#include "model/architectures/deberta_v2/deberta_v2_model.h"

namespace onepass::model {
namespace {

deberta_v2::AttentionWeights read_deberta_attention(const DebertaV2Config& c,
                                                    const weights::WeightStore& store,
                                                    const std::string& a, bool c2p, bool p2c) {
  const std::int64_t hidden = c.hidden_size;
  const auto h = static_cast<std::size_t>(hidden);
  const auto head_size = h / static_cast<std::size_t>(c.num_attention_heads);
  const auto in_proj = store.get(a + "in_proj.weight", {3 * hidden, hidden});
  const auto q_bias = store.get(a + "q_bias", {hidden});
  const auto v_bias = store.get(a + "v_bias", {hidden});

  deberta_v2::AttentionWeights weights;
  weights.qkv_weight.resize(3 * h * h);
  for (std::size_t part = 0; part < 3; ++part) {  // query, key, value
    for (std::size_t row = 0; row < h; ++row) {   // row = head * head_size + i
      const std::size_t head = row / head_size;
      const std::size_t source = head * 3 * head_size + part * head_size + row % head_size;
      std::copy_n(in_proj.data + source * h, h, weights.qkv_weight.data() + (part * h + row) * h);
    }
  }
  weights.qkv_bias.assign(3 * h, 0.0f);
  std::copy_n(q_bias.data, h, weights.qkv_bias.data());
  std::copy_n(v_bias.data, h, weights.qkv_bias.data() + 2 * h);
  if (c2p) weights.pos_key_weight = store.get(a + "pos_proj.weight", {hidden, hidden}).data;
  if (p2c) {
    weights.pos_query_weight = store.get(a + "pos_q_proj.weight", {hidden, hidden}).data;
    weights.pos_query_bias = store.get(a + "pos_q_proj.bias", {hidden}).data;
  }
  return weights;
}

}  // namespace

const ArchitectureFamily kDebertaFamily = {
    &read_deberta_family_config,
    [](const weights::ModelConfig& config, weights::WeightStore store,
       const LoadOptions& options) -> std::unique_ptr<Encoder> {
      bool talking_head = false;
      config.fields->read("talking_head", talking_head);
      if (talking_head)
        throw Error(ErrorKind::kUnsupported, "DeBERTa: talking_head is not supported");
      return std::make_unique<deberta_v2::Model>(deberta_config(config), std::move(store), options,
                                                 &read_deberta_attention);
    },
};

}  // namespace onepass::model
