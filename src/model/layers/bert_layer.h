// One post-LayerNorm transformer encoder layer as BERT, RoBERTa and XLM-R define it
// (transformers' BertLayer): x = LN(x + attn(x)·Woᵀ + bo); x = LN(x + act(x·Wiᵀ + bi)·Wdᵀ + bd).
// Q, K and V are one fused [3·hidden, hidden] product: their weights are concatenated once at
// load (the only weight copy); every other weight is used in place from the mapping.
#pragma once

#include <cstddef>
#include <memory>
#include <string>

#include "kernels/matmul.h"
#include "tensor/arena.h"
#include "weights/config.h"
#include "weights/weight_store.h"

namespace onepass::model {

struct LayerNormWeights {
  const float* gamma = nullptr;
  const float* beta = nullptr;
  float eps = 1e-12f;
};

// Reads `<prefix>.weight` / `<prefix>.bias` of shape [dim].
LayerNormWeights load_layer_norm(const weights::WeightStore& store, const std::string& prefix,
                                 std::int64_t dim, double eps);

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
  const char* attention_output = "attention.output.dense";
  const char* attention_norm = "attention.output.LayerNorm";
  const char* intermediate = "intermediate.dense";
  const char* output = "output.dense";
  const char* output_norm = "output.LayerNorm";
};

inline constexpr BertLayerNames kDistilBertLayerNames{
    "attention.q_lin", "attention.k_lin", "attention.v_lin", "attention.out_lin",
    "sa_layer_norm",   "ffn.lin1",        "ffn.lin2",        "output_layer_norm"};

class BertLayer {
 public:
  // prefix: "<base>encoder.layer.<i>." Throws kInvalidModel (missing / misshapen weights),
  // kUnsupported (hidden_act). precision: of the four matrix products; bf16 also takes
  // attention's products in bf16 (LayerNorm, softmax and GELU stay fp32).
  BertLayer(const weights::WeightStore& store, const std::string& prefix,
            const weights::ModelConfig& config,
            kernels::Precision precision = kernels::Precision::kFp32,
            const BertLayerNames& names = {});

  // x: [tokens, hidden], updated in place. offsets: num_seqs + 1 token offsets.
  void forward(float* x, std::int64_t tokens, const std::size_t* offsets, std::size_t num_seqs,
               const LayerScratch& scratch) const;

 private:
  std::int64_t hidden_;
  std::int64_t heads_;
  bool bf16_attention_;
  std::unique_ptr<float[]> qkv_bias_;
  kernels::Linear qkv_;
  kernels::Linear attention_output_;
  LayerNormWeights attention_norm_;
  kernels::Linear intermediate_;  // activation fused into the product
  kernels::Linear output_;
  LayerNormWeights output_norm_;
};

}  // namespace onepass::model
