// The pieces of a rotary-position encoder that NomicBERT (NomicBertBlock) and GTE (NewLayer)
// share: token plus token-type embeddings and a LayerNorm (no position table: positions are the
// rotation), then post-LayerNorm layers of
//   qkv = x·Wqkvᵀ (+ b); rotate the queries and keys; context = attention(q, k, v)
//   x = LN(x + context·Woᵀ (+ b))
//   x = LN(x + mlp(x)), mlp(x) = act(x·W1ᵀ)·W2ᵀ, or gated: (x·Wupᵀ) · act(x·Wgateᵀ), then ·W2ᵀ
// on the whole ragged batch as one [tokens, hidden] matrix; nothing is padded (the remote code
// pads and masks, which is the same thing: a padded key's score gets the float minimum).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "kernels/matmul.h"
#include "model/encoder.h"
#include "model/layers/bert_stack_pass.h"
#include "model/layers/post_attention.h"
#include "model/layers/rotary_table.h"
#include "tensor/arena.h"

namespace onepass::model {

// Sizes and choices every layer of one encoder shares.
struct RotaryLayerShape {
  std::int64_t heads = 0;
  std::int64_t head_dim = 0;
  std::int64_t intermediate = 0;
  bool gated_mlp = false;
  bool bf16_attention = false;  // attention's products in bf16 (kernels::attention_precision)
};

struct RotaryLayer {
  kernels::Linear qkv;               // [3 hidden, hidden]: queries, keys, values
  kernels::Linear attention_output;  // [hidden, hidden]
  LayerNormWeights attention_norm;
  // The plain MLP's first product with its activation fused; in a gated MLP the product that
  // the gate multiplies (no activation).
  kernels::Linear mlp_in;
  kernels::Linear gate;  // gated MLP only: the product whose activation is fused
  kernels::Linear mlp_out;
  LayerNormWeights mlp_norm;

  // One layer on pass.x in place, with pass.scratch. rotary: one table for every sequence, or one
  // per sequence (NomicBERT's per-length NTK scaling). gate_scratch: [tokens, intermediate] for a
  // gated MLP, else unused.
  void forward(const BertStackPass& pass, const RotaryLayerShape& shape,
               std::span<const RotaryTable* const> rotary, float* gate_scratch) const;
};

// x [tokens, hidden] = LN(word_embeddings[id] (+ token_type_embeddings[type])) for every token
// of the batch (sequence s at rows offsets[s]..); token_type_embeddings null: none (a sequence
// without token types uses type 0).
void embed_tokens_and_types(std::span<const SequenceInput> batch, const std::size_t* offsets,
                            const float* word_embeddings, const float* token_type_embeddings,
                            const LayerNormWeights& norm, std::int64_t hidden, float* x,
                            tensor::ScratchArena& arena);

}  // namespace onepass::model
