// One post-LayerNorm transformer encoder layer as BERT, RoBERTa and XLM-R define it
// (transformers' BertLayer): standard self-attention, then post_attention.h's block.
// Q, K and V are one fused [3·hidden, hidden] product: their weights are concatenated once at
// load (the only weight copy); every other weight is used in place from the mapping.
#pragma once

#include <cstddef>
#include <memory>
#include <string>

#include "kernels/attention.h"
#include "kernels/matmul.h"
#include "model/layers/post_attention.h"
#include "tensor/arena.h"
#include "weights/config.h"
#include "weights/weight_store.h"

namespace onepass::model {

// Activations of one forward pass, token-major over the whole ragged batch. Owned by the caller
// (carved from its scratch arena); every layer reuses them.
struct LayerScratch {
  float* qkv = nullptr;           // [tokens, 3 * hidden]
  float* context = nullptr;       // [tokens, hidden]
  float* intermediate = nullptr;  // [tokens, intermediate_size]
  float* attention = nullptr;     // kernels::self_attention_scratch_floats

  // Carves all four from `arena` for a batch of `num_seqs` sequences at `offsets`.
  static LayerScratch carve(tensor::ScratchArena& arena, const std::size_t* offsets,
                            std::size_t num_seqs, std::int64_t hidden,
                            std::int64_t intermediate_size);
};

// Weight names inside one layer, after its prefix. BERT's are the defaults; DistilBERT's
// TransformerBlock has the same shape under other names (kDistilBertLayerNames).
struct BertLayerNames {
  const char* query = "attention.self.query";
  const char* key = "attention.self.key";
  const char* value = "attention.self.value";
  PostAttentionNames post_attention{};
};

inline constexpr BertLayerNames kDistilBertLayerNames{
    "attention.q_lin", "attention.k_lin", "attention.v_lin",
    PostAttentionNames{"attention.out_lin", "sa_layer_norm", "ffn.lin1", "ffn.lin2",
                       "output_layer_norm"}};

class BertLayer {
 public:
  // prefix: "<base>encoder.layer.<i>." Throws kInvalidModel (missing / misshapen weights),
  // kUnsupported (hidden_act). precision: of the four matrix products; bf16 also takes
  // attention's products in bf16 (LayerNorm, softmax and GELU stay fp32).
  BertLayer(const weights::WeightStore& store, const std::string& prefix,
            const weights::ModelConfig& config,
            kernels::Precision precision = kernels::Precision::kFp32,
            const BertLayerNames& names = {});

  // x: [tokens, hidden], updated in place. offsets: num_seqs + 1 token offsets. bias: added to
  // the attention scores (MPNet's relative positions); none by default.
  void forward(float* x, std::int64_t tokens, const std::size_t* offsets, std::size_t num_seqs,
               const LayerScratch& scratch, const kernels::DistanceBias& bias = {}) const;

 private:
  std::int64_t hidden_;
  std::int64_t heads_;
  bool bf16_attention_;
  std::unique_ptr<float[]> qkv_bias_;
  kernels::Linear qkv_;
  PostAttention post_attention_;
};

}  // namespace onepass::model
