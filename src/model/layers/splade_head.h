// A masked-LM head served the way SPLADE sparse embedders use it (naver/splade-*, OpenSearch's
// neural-sparse models: BertForMaskedLM, DistilBertForMaskedLM): the head's vocabulary logits of
// every token, pooled per sequence as max over its tokens of log(1 + relu(logit)). The same
// pooling as sentence-transformers' SpladePooling and TEI's `splade`; most entries are 0.
//
// The head itself is BERT's BertLMPredictionHead (DistilBERT's vocab_transform,
// vocab_layer_norm, vocab_projector): dense, activation, LayerNorm, then a decoder whose weight is
// usually the word embedding table (tied) with a bias of its own.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "kernels/matmul.h"
#include "model/layers/post_attention.h"
#include "tensor/arena.h"
#include "weights/weight_store.h"

namespace onepass::model {

// The head's weight names in a checkpoint.
struct SpladeHeadNames {
  const char* transform;     // dense [hidden, hidden] (.weight, .bias)
  const char* norm;          // its LayerNorm (.weight, .bias)
  const char* decoder;       // [vocab, hidden]; absent when saved tied to the word embeddings
  const char* decoder_bias;  // [vocab]
};

class SpladeHead {
 public:
  SpladeHead() = default;
  // `act` follows the transform, `norm_eps` is its LayerNorm's. The decoder is `names.decoder`
  // when the checkpoint has it, else `word_embeddings` [vocab, hidden] (save_pretrained keeps
  // one copy of tied weights). It is packed here: nothing points into the mapping once built.
  SpladeHead(const weights::WeightStore& store, const SpladeHeadNames& names,
             kernels::Activation act, double norm_eps, const float* word_embeddings,
             std::int64_t vocab, std::int64_t hidden);

  // x: the encoder's last hidden states [tokens, hidden] (sequence s owns rows offsets[s] to
  // offsets[s + 1]). out: [num_seqs, vocab], the pooled vectors. The vocabulary product runs
  // over a bounded block of rows at a time, so that its scratch stays small whatever the batch.
  void forward(const float* x, const std::size_t* offsets, std::size_t num_seqs,
               tensor::ScratchArena& arena, std::vector<float>& out) const;

  std::int64_t vocab() const { return vocab_; }

 private:
  kernels::Linear transform_;
  LayerNormWeights norm_;
  kernels::Linear decoder_;
  std::int64_t vocab_ = 0;
  std::int64_t hidden_ = 0;
};

}  // namespace onepass::model
