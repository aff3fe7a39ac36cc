#include "model/layers/rotary_layer.h"

#include <cmath>

#include "kernels/attention.h"
#include "kernels/elementwise.h"

namespace onepass::model {

void RotaryLayer::forward(const BertStackPass& pass, const RotaryLayerShape& shape,
                          std::span<const RotaryTable* const> rotary, float* gate_scratch) const {
  const std::int64_t h = pass.hidden;
  const std::int64_t tokens = pass.tokens;
  const LayerScratch& scratch = pass.scratch;
  float* x = pass.x;
  qkv.forward(x, tokens, scratch.qkv);
  if (rotary.size() == 1) {
    rotary[0]->rotate_queries_and_keys(scratch.qkv, 3 * h, shape.heads, pass.offsets,
                                       pass.num_seqs);
  } else {
    for (std::size_t s = 0; s < pass.num_seqs; ++s) {
      const std::size_t one[2] = {0, pass.offsets[s + 1] - pass.offsets[s]};
      rotary[s]->rotate_queries_and_keys(
          scratch.qkv + static_cast<std::int64_t>(pass.offsets[s]) * 3 * h, 3 * h, shape.heads, one,
          1);
    }
  }
  kernels::AttentionShape attention;
  attention.num_heads = shape.heads;
  attention.head_dim = shape.head_dim;
  attention.ld_qkv = 3 * h;
  attention.bf16_products = shape.bf16_attention;
  const float scale = 1.0f / std::sqrt(static_cast<float>(shape.head_dim));
  kernels::self_attention(scratch.qkv, scratch.qkv + h, scratch.qkv + 2 * h, attention,
                          pass.offsets, pass.num_seqs, scale, scratch.context, scratch.attention);
  attention_output.forward(scratch.context, tokens, x, /*accumulate=*/true);
  kernels::layer_norm(x, tokens, h, attention_norm.gamma, attention_norm.beta, attention_norm.eps);

  mlp_in.forward(x, tokens, scratch.intermediate);
  if (shape.gated_mlp) {
    gate.forward(x, tokens, gate_scratch);
    kernels::multiply(scratch.intermediate, gate_scratch, tokens * shape.intermediate);
  }
  mlp_out.forward(scratch.intermediate, tokens, x, /*accumulate=*/true);
  kernels::layer_norm(x, tokens, h, mlp_norm.gamma, mlp_norm.beta, mlp_norm.eps);
}

void embed_tokens_and_types(std::span<const SequenceInput> batch, const std::size_t* offsets,
                            const float* word_embeddings, const float* token_type_embeddings,
                            const LayerNormWeights& norm, std::int64_t hidden, float* x,
                            tensor::ScratchArena& arena) {
  const std::size_t tokens = offsets[batch.size()];
  auto* ids = arena.alloc_as<std::int32_t>(tokens);
  auto* types = arena.alloc_as<std::int32_t>(tokens);
  for (std::size_t s = 0; s < batch.size(); ++s) {
    const auto& seq = batch[s];
    for (std::size_t i = 0; i < seq.input_ids.size(); ++i) {
      ids[offsets[s] + i] = seq.input_ids[i];
      types[offsets[s] + i] = seq.token_type_ids.empty() ? 0 : seq.token_type_ids[i];
    }
  }
  const auto n = static_cast<std::int64_t>(tokens);
  kernels::embedding_gather(word_embeddings, hidden, ids, n, x, false);
  if (token_type_embeddings != nullptr)
    kernels::embedding_gather(token_type_embeddings, hidden, types, n, x, true);
  kernels::layer_norm(x, n, hidden, norm.gamma, norm.beta, norm.eps);
}

}  // namespace onepass::model
