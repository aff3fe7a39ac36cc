#include "model/layers/bert_stack_pass.h"

namespace onepass::model {

BertStackPass::BertStackPass(int threads, tensor::ArenaPool& arenas, const ForwardOutput& out,
                             std::size_t num_seqs, std::int64_t hidden,
                             std::int64_t intermediate_size)
    : thread_scope(threads),
      arena(arenas.acquire()),
      offsets(out.token_offsets.data()),
      num_seqs(num_seqs),
      tokens(static_cast<std::int64_t>(offsets[num_seqs])),
      hidden(hidden),
      x(arena->alloc(static_cast<std::size_t>(tokens * hidden))),
      scratch(LayerScratch::carve(*arena, offsets, num_seqs, hidden, intermediate_size)) {}

void BertStackPass::run(const std::vector<BertLayer>& layers,
                        const kernels::DistanceBias& bias) const {
  for (const auto& layer : layers) layer.forward(x, tokens, offsets, num_seqs, scratch, bias);
}

}  // namespace onepass::model
