// A masked-LM head (BERT's BertLMPredictionHead, DistilBERT's vocab_transform, vocab_layer_norm,
// vocab_projector; ELECTRA's generator_predictions and generator_lm_head): dense, activation,
// LayerNorm, then a decoder to the vocabulary whose weight is usually the word embedding table
// (tied) with a bias of its own. The dense maps hidden onto the embedding width, which is hidden
// but for ELECTRA (embedding_size). It serves two tasks:
// - fill-mask: the vocabulary logits at the positions a sequence names (its mask tokens);
// - SPLADE sparse embeddings (naver/splade-*, OpenSearch's neural-sparse models): the logits of
//   every token, pooled per sequence as max over its tokens of log(1 + relu(logit)), the
//   pooling of sentence-transformers' SpladePooling and TEI's `splade`; most entries are 0.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "kernels/matmul.h"
#include "model/encoder.h"
#include "model/layers/post_attention.h"
#include "tensor/arena.h"
#include "weights/weight_store.h"

namespace onepass::model {

// The head's weight names in a checkpoint.
struct MaskedLmHeadNames {
  const char* transform;  // dense [width, hidden] (.weight, .bias)
  const char* norm;       // its LayerNorm over width (.weight, .bias)
  // [vocab, width]; absent when saved tied to the word embeddings; null: always the word
  // embeddings (DeBERTa-v3's lm_predictions head multiplies by them in its forward).
  const char* decoder;
  const char* decoder_bias;  // [vocab]; null: the decoder has no bias
  // Whether the transform and its LayerNorm have biases (ModernBERT's classifier_bias and
  // norm_bias can drop them; BERT's and DistilBERT's always have them).
  bool transform_bias = true;
  bool norm_bias = true;
};

class MaskedLmHead {
 public:
  MaskedLmHead() = default;
  // `act` follows the transform, `norm_eps` is its LayerNorm's. The decoder is `names.decoder`
  // when the checkpoint has it, else `word_embeddings` [vocab, width] (save_pretrained keeps
  // one copy of tied weights). It is packed here: nothing points into the mapping once built.
  // width: the embedding width the transform maps onto; 0 means hidden.
  MaskedLmHead(const weights::WeightStore& store, const MaskedLmHeadNames& names,
               kernels::Activation act, double norm_eps, const float* word_embeddings,
               std::int64_t vocab, std::int64_t hidden, std::int64_t width = 0);

  // x: the encoder's last hidden states [tokens, hidden] (sequence s owns rows offsets[s] to
  // offsets[s + 1]). Fills out.logits [num_seqs, vocab] with the SPLADE vectors of the
  // sequences without vocab_logit_positions (0 for the others) and out.position_logits with
  // the logits at the positions of those that have them (encoder.h). Only the rows needed go
  // through the head, a bounded block at a time, so its scratch stays small whatever the batch.
  void forward(const float* x, const std::size_t* offsets, std::span<const SequenceInput> batch,
               tensor::ScratchArena& arena, ForwardOutput& out) const;

  std::int64_t vocab() const { return vocab_; }

 private:
  kernels::Linear transform_;
  LayerNormWeights norm_;
  kernels::Linear decoder_;
  std::int64_t vocab_ = 0;
  std::int64_t hidden_ = 0;
  std::int64_t width_ = 0;
};

}  // namespace onepass::model
