// MPNet as transformers v4.40.2 runs it (models/mpnet/modeling_mpnet.py), the encoder of
// sentence-transformers' all-mpnet-base-v2: word + position embeddings (positions numbered from
// padding_idx 1 + 1, as RoBERTa's; no token types), LayerNorm, then post-LayerNorm layers of
// BERT's shape (model/layers/bert_layer.h under MPNet's weight names) whose attention scores all
// add one relative-position bias (MPNetEncoder.compute_position_bias: T5-style buckets of the
// key's offset from the query, one learned value per bucket and head, shared by the layers).
// Heads: MPNetModel's pooler (tanh(dense(first token))), MPNetForSequenceClassification's
// RoBERTa-style head (tanh(dense) then out_proj, on the first token) and
// MPNetForTokenClassification's classifier on every token, and MPNetForMaskedLM's MPNetLMHead
// (dense, gelu, layer_norm, decoder tied to the word embeddings, bias) through
// model/layers/masked_lm_head.h.
//
// The whole ragged batch is one [total_tokens, hidden] matrix; nothing is padded.
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <string>
#include <vector>

#include "base/error.h"
#include "kernels/attention.h"
#include "kernels/elementwise.h"
#include "kernels/matmul.h"
#include "model/architectures/architectures.h"
#include "model/architectures/mpnet/mpnet_config.h"
#include "model/batch_check.h"
#include "model/layers/bert_layer.h"
#include "model/layers/bert_stack_pass.h"
#include "model/layers/encoder_base.h"
#include "model/layers/encoder_heads.h"
#include "model/layers/masked_lm_head.h"
#include "model/layers/positions.h"
#include "model/precision_check.h"
#include "tensor/arena.h"

namespace onepass::model {
namespace {

using weights::ModelConfig;
using weights::WeightStore;

constexpr std::int32_t kPaddingIdx = 1;  // MPNetEmbeddings.padding_idx, fixed in transformers

constexpr BertLayerNames kMpnetLayerNames{
    "attention.attn.q", "attention.attn.k", "attention.attn.v",
    PostAttentionNames{"attention.attn.o", "attention.LayerNorm", "intermediate.dense",
                       "output.dense", "output.LayerNorm"}};

// MPNetEncoder.relative_position_bucket(j - i) with its defaults (32 buckets, max_distance 128):
// half the buckets for keys before the query, half for keys after; offsets under 8 get a bucket
// each, longer ones share logarithmically wider buckets up to the last. The logarithm is taken
// in float32, as torch takes it, so that the truncation falls the same way.
int relative_bucket(std::int64_t key_minus_query) {
  constexpr int kHalf = 16;  // num_buckets / 2
  constexpr int kExact = 8;  // kHalf / 2
  constexpr double kMaxDistance = 128.0;
  const std::int64_t n = -key_minus_query;
  int bucket = n < 0 ? kHalf : 0;
  const std::int64_t distance = std::llabs(n);
  if (distance < kExact) return bucket + static_cast<int>(distance);
  // torch.log(n.float() / 8) / math.log(128 / 8) * 8: a float32 tensor over Python doubles.
  const float scaled = std::log(static_cast<float>(distance) / kExact) /
                       static_cast<float>(std::log(kMaxDistance / kExact)) *
                       static_cast<float>(kHalf - kExact);
  return bucket + std::min(kHalf - 1, kExact + static_cast<int>(scaled));
}

class MpnetEncoder final : public EncoderBase {
 public:
  MpnetEncoder(const MpnetConfig& config, WeightStore store, const LoadOptions& options);
  void forward(std::span<const SequenceInput> batch, ForwardOutput& out) const override;

 private:
  std::int64_t intermediate_size_ = 0;
  const float* word_embeddings_ = nullptr;      // [vocab_size, hidden]
  const float* position_embeddings_ = nullptr;  // [max_position_embeddings, hidden]
  LayerNormWeights embedding_norm_;
  std::vector<BertLayer> layers_;
  // The position bias of every offset a sequence can have, [heads, 2 * max_tokens - 1], built
  // once at load: the layers read it in place.
  std::vector<float> distance_bias_;
  kernels::DistanceBias bias_view_;
};

MpnetEncoder::MpnetEncoder(const MpnetConfig& config, WeightStore store, const LoadOptions& options)
    : EncoderBase(config, std::move(store), options), intermediate_size_(config.intermediate_size) {
  const bool classifier = info_.head != HeadKind::kBaseModel;
  // Task models nest the encoder under "mpnet."; MPNetModel is saved without a prefix, though
  // some checkpoints carry one anyway.
  std::string base = "mpnet.";
  if (!classifier && store_.contains("embeddings.word_embeddings.weight")) base.clear();

  const std::int64_t h = config.hidden_size;
  const std::int64_t heads = config.num_attention_heads;
  word_embeddings_ =
      store_.get(base + "embeddings.word_embeddings.weight", {config.vocab_size, h}).data;
  position_embeddings_ =
      store_
          .get(base + "embeddings.position_embeddings.weight", {config.max_position_embeddings, h})
          .data;
  embedding_norm_ =
      load_layer_norm(store_, base + "embeddings.LayerNorm", h, config.layer_norm_eps);

  // nn.Embedding(relative_attention_num_buckets, heads): row = bucket, column = head.
  const float* buckets = store_
                             .get(base + "encoder.relative_attention_bias.weight",
                                  {config.relative_attention_num_buckets, heads})
                             .data;
  const std::int64_t longest = info_.max_tokens;
  bias_view_.stride = 2 * longest - 1;
  bias_view_.center = longest - 1;
  distance_bias_.resize(static_cast<std::size_t>(heads * bias_view_.stride));
  for (std::int64_t offset = -(longest - 1); offset < longest; ++offset) {
    const std::int64_t bucket = relative_bucket(offset);
    for (std::int64_t head = 0; head < heads; ++head) {
      distance_bias_[static_cast<std::size_t>(head * bias_view_.stride + bias_view_.center +
                                              offset)] = buckets[bucket * heads + head];
    }
  }
  bias_view_.values = distance_bias_.data();

  layers_.reserve(static_cast<std::size_t>(config.num_hidden_layers));
  for (int i = 0; i < config.num_hidden_layers; ++i) {
    layers_.emplace_back(store_, base + "encoder.layer." + std::to_string(i) + ".", config,
                         options.precision, kMpnetLayerNames);
    store_.drop_resident_pages();  // this layer's matrices are packed: its file pages can go
  }

  // MPNetPooler on a base model; MPNetClassificationHead: tanh(dense(first token)), then
  // out_proj.
  HeadWeights head_weights;
  head_weights.base_pooler = base + "pooler.dense";
  head_weights.sequence_dense = "classifier.dense";
  head_weights.sequence_out = "classifier.out_proj";
  head_weights.masked_lm = [&] {
    // MPNetLMHead's activation is the gelu function itself, whatever hidden_act.
    return MaskedLmHead(
        store_, {"lm_head.dense", "lm_head.layer_norm", "lm_head.decoder.weight", "lm_head.bias"},
        kernels::Activation::kGeluErf, config.layer_norm_eps, word_embeddings_, config.vocab_size,
        h);
  };
  task_heads_ = EncoderHeads(store_, info_, head_weights);
  info_.parameter_count = store_.parameter_count();
  store_.drop_resident_pages();  // every matrix is packed now
}

void MpnetEncoder::forward(std::span<const SequenceInput> batch, ForwardOutput& out) const {
  if (!begin_forward(batch, info_, out)) return;
  BertStackPass pass(threads_, arenas_, out, batch.size(), info_.hidden_size, intermediate_size_);

  auto* ids = pass.arena->alloc_as<std::int32_t>(static_cast<std::size_t>(pass.tokens));
  auto* positions = pass.arena->alloc_as<std::int32_t>(static_cast<std::size_t>(pass.tokens));
  for (std::size_t s = 0; s < pass.num_seqs; ++s) {
    const auto& seq_ids = batch[s].input_ids;
    std::copy(seq_ids.begin(), seq_ids.end(), ids + pass.offsets[s]);
    positions_after_padding(seq_ids, kPaddingIdx, positions + pass.offsets[s]);
  }
  const std::int64_t h = pass.hidden;
  kernels::embedding_gather(word_embeddings_, h, ids, pass.tokens, pass.x, false);
  kernels::embedding_gather(position_embeddings_, h, positions, pass.tokens, pass.x, true);
  kernels::layer_norm(pass.x, pass.tokens, h, embedding_norm_.gamma, embedding_norm_.beta,
                      embedding_norm_.eps);
  pass.run(layers_, bias_view_);

  task_heads_.forward(pass.x, pass.offsets, batch, *pass.arena, out);
}

}  // namespace

const ArchitectureFamily kMpnetFamily = {
    &read_mpnet_family_config,
    &load_family_encoder<MpnetEncoder, &mpnet_config>,
};

}  // namespace onepass::model
