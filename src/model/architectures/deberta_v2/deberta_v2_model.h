// DeBERTa-v2 / v3 (mDeBERTa-v3 among them), exact to Hugging Face transformers v4.47.1 in
// float32 inference. The encoder object behind kDebertaV2Family (private to
// src/model/architectures): deberta_v2_load.cpp builds it from config and weights, deberta_v2.cpp
// runs the forward pass.
//
// Padding-free: the embeddings, every linear layer, the LayerNorms and the optional conv run on
// the packed [total_tokens, hidden] batch; the disentangled attention runs per (sequence, head).
// The relative-embedding projections (pos_key / pos_query) depend on weights only, so they are
// computed once at load.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "kernels/matmul.h"
#include "model/architectures/deberta_v2/deberta_v2_config.h"
#include "model/architectures/deberta_v2/deberta_v2_conv.h"
#include "model/architectures/deberta_v2/deberta_v2_relative.h"
#include "model/encoder.h"
#include "model/layers/encoder_heads.h"
#include "model/layers/masked_lm_head.h"
#include "model/layers/post_attention.h"
#include "tensor/arena.h"
#include "weights/weight_store.h"

namespace onepass::model::deberta_v2 {

struct Layer {
  std::vector<float> qkv_bias;  // [3 hidden]
  kernels::Linear qkv;
  // Projected relative embeddings, transposed to [hidden, 2 att_span] (see HeadView).
  std::vector<float> pos_key_t;    // empty without c2p
  std::vector<float> pos_query_t;  // empty without p2c
  // The same as bf16 pairs ([hidden / 2, 2 att_span] words) when bf16_attention_; the fp32
  // tables are then empty.
  std::vector<std::uint32_t> pos_key_pairs;
  std::vector<std::uint32_t> pos_query_pairs;
  PostAttention post_attention;  // BERT's shape and weight names (model/layers)
};

// One layer's attention weights as this encoder runs them, whatever names and layout the
// checkpoint stores them under: DeBERTa-v2's query_proj / key_proj / value_proj, or DeBERTa's
// (v1) fused in_proj with q_bias and v_bias (architectures/deberta).
struct AttentionWeights {
  std::vector<float> qkv_weight;  // [3 hidden, hidden]: the query rows, then key, then value
  std::vector<float> qkv_bias;    // [3 hidden]
  // The projections of the relative embeddings: c2p's keys, p2c's queries ([hidden, hidden];
  // a null bias is none), pointing into the weight store; null when the layer does not run that
  // term.
  const float* pos_key_weight = nullptr;
  const float* pos_key_bias = nullptr;
  const float* pos_query_weight = nullptr;
  const float* pos_query_bias = nullptr;
};

// Reads layer attention weights below `prefix` (".../attention.self."); c2p / p2c say which
// relative projections the layer runs.
using AttentionReader = AttentionWeights (*)(const DebertaV2Config& config,
                                             const weights::WeightStore& store,
                                             const std::string& prefix, bool c2p, bool p2c);

// DeBERTa-v2's names: query_proj, key_proj, value_proj, and pos_key_proj / pos_query_proj unless
// share_att_key (then the key and query projections themselves).
AttentionWeights read_deberta_v2_attention(const DebertaV2Config& config,
                                           const weights::WeightStore& store,
                                           const std::string& prefix, bool c2p, bool p2c);

class Model final : public Encoder {
 public:
  Model(const DebertaV2Config& config, weights::WeightStore store, const LoadOptions& options,
        AttentionReader read_attention = &read_deberta_v2_attention);
  const ModelInfo& info() const override { return info_; }
  void forward(std::span<const SequenceInput> batch, ForwardOutput& out) const override;

 private:
  void load_embeddings(const DebertaV2Config& c);
  void load_layer(const DebertaV2Config& c, int index, const float* rel_embeddings,
                  AttentionReader read_attention);
  void load_head(const DebertaV2Config& c);
  MaskedLmHead masked_lm_head(const DebertaV2Config& c) const;
  void embed(std::span<const SequenceInput> batch, const std::size_t* offsets, float* x,
             float* scratch) const;
  void attention(const Layer& layer, const float* qkv, float* ctx, const std::size_t* offsets,
                 std::size_t num_seqs, float* scratch, std::size_t scratch_per_thread) const;

  weights::WeightStore store_;
  ModelInfo info_;
  std::string prefix_;  // "deberta." for the classifier
  int hidden_ = 0;
  int embedding_size_ = 0;
  int heads_ = 0;
  int head_size_ = 0;
  int intermediate_size_ = 0;
  int threads_ = 0;                                           // LoadOptions::threads; 0: all cores
  kernels::Precision precision_ = kernels::Precision::kFp32;  // encoder layers' products
  bool bf16_attention_ = false;       // P·V and the relative products in bf16 (bf16, int8)
  bool bf16_content_scores_ = false;  // Q·Kᵀ in bf16 too (bf16 only)
  float eps_ = 0.0f;
  float scale_ = 1.0f;  // HF's divisor sqrt(head_size * (1 + #c2p/p2c listed))
  bool c2p_ = false;    // relative_attention and "c2p" in pos_att_type
  bool p2c_ = false;

  const float* word_embeddings_ = nullptr;
  const float* position_embeddings_ = nullptr;    // null unless position_biased_input
  const float* token_type_embeddings_ = nullptr;  // null when type_vocab_size == 0
  kernels::Linear embed_proj_;                    // only when embedding_size != hidden_size
  LayerNormWeights embedding_norm_;
  std::unique_ptr<RelativeIndex> index_;
  std::vector<Layer> layers_;
  ConvLayer conv_;
  EncoderHeads task_heads_;  // DebertaV2ForMaskedLM's head: legacy or not (DebertaV2Config::legacy)
  mutable tensor::ArenaPool arenas_;
};

}  // namespace onepass::model::deberta_v2
