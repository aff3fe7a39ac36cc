// One forward pass through a stack of BertLayers, as BERT, ELECTRA and DistilBERT open it: the
// team size for the pass, an arena from the encoder's pool, and carved from it the hidden
// states x [tokens, hidden] and the layers' scratch. The architecture embeds into x, calls
// run(layers), and puts its head on x. NomicBERT opens its pass the same way and runs its own
// layers on the same scratch.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "model/encoder.h"
#include "model/layers/bert_layer.h"
#include "model/layers/thread_scope.h"
#include "tensor/arena.h"

namespace onepass::model {

// Members in construction order: the team size and the arena come first, and hold for the
// whole pass.
struct BertStackPass {
  // out.token_offsets must hold the batch's num_seqs + 1 offsets (begin_forward fills them).
  BertStackPass(int threads, tensor::ArenaPool& arenas, const ForwardOutput& out,
                std::size_t num_seqs, std::int64_t hidden, std::int64_t intermediate_size);

  // bias: the attention scores' relative-position bias every layer adds (MPNet); none by default.
  void run(const std::vector<BertLayer>& layers, const kernels::DistanceBias& bias = {}) const;

  ThreadScope thread_scope;
  tensor::ArenaPool::Lease arena;
  const std::size_t* offsets;
  std::size_t num_seqs;
  std::int64_t tokens;
  std::int64_t hidden;
  float* x;  // [tokens, hidden]
  LayerScratch scratch;
};

}  // namespace onepass::model
