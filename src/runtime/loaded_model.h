// A model in memory: the shared encoder and tokenizer, and what it serves. Immutable once
// built and shared by every request (std::shared_ptr<const LoadedModel>): an idle unload or an
// MME unload only drops the registry's reference, so batches already running keep theirs.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "model/encoder.h"
#include "model/heads/dense_module.h"
#include "runtime/service.h"
#include "tokenizer/decoding.h"
#include "tokenizer/tokenizer.h"

namespace onepass::runtime {

struct LoadedModel {
  std::uint64_t instance_id = 0;  // unique per load: the batcher's queue id
  ModelDescription description;   // state kReady, info from the encoder
  std::unique_ptr<model::Encoder> encoder;
  std::unique_ptr<tokenizer::Tokenizer> tokenizer;
  tokenizer::TokenizerSettings tokenizer_settings;  // how decode() reads the folder's ids back
  std::int32_t mask_token_id = -1;                  // -1: the tokenizer has no mask token
  std::int32_t pad_token_id = -1;                   // -1: none
  // Embedders: description.dense_modules' weights, run on every pooled embedding in order.
  std::vector<model::heads::DenseModule> dense;
};

}  // namespace onepass::runtime
