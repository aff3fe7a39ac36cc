// What every family's encoder holds besides its own weights and layers: the weight mapping its
// pointers point into, the ModelInfo describe_checkpoint gives, its thread count, the heads the
// checkpoint carries (EncoderHeads; ModernBERT runs its own and leaves it empty) and one scratch
// arena per thread. A family derives from it and adds what is its own.
#pragma once

#include <utility>

#include "model/encoder.h"
#include "model/layers/encoder_heads.h"
#include "tensor/arena.h"
#include "weights/weight_store.h"

namespace onepass::model {

class EncoderBase : public Encoder {
 public:
  const ModelInfo& info() const override { return info_; }

 protected:
  EncoderBase(const weights::ModelConfig& config, weights::WeightStore store,
              const LoadOptions& options)
      : store_(std::move(store)), info_(describe_checkpoint(config)), threads_(options.threads) {}

  // Declared first, so destroyed last: every weight pointer of the family and its heads points
  // into this mapping.
  weights::WeightStore store_;
  ModelInfo info_;
  int threads_ = 0;
  EncoderHeads task_heads_;
  mutable tensor::ArenaPool arenas_;
};

}  // namespace onepass::model
