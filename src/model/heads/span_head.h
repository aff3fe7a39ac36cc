// GLiNER's span head (urchade/GLiNER, gliner/modeling: UniEncoderSpanModel), which scores every
// span of up to max_width words of a text against every label of its prompt. From the
// backbone's token states of one sequence, "<<ENT>> label ... <<SEP>> words" with [CLS]/[SEP]
// around it:
//   token states -> the projection to GLiNER's hidden_size (when it differs from the backbone's)
//   words:   each word's first sub-token                                   [W, H]
//            -> the bidirectional LSTM (LstmSeq2SeqEncoder)                [W, H]
//   prompts: each <<ENT>> token (the token after it without embed_ent_token) [C, H]
//            -> prompt_rep_layer: Linear(H, 4H), ReLU, Linear(4H, H)
//   spans (i, i + k), k < max_width: the span representation of span_mode
//     markerV0 (SpanMarkerV0): s = MLP_start(word i), e = MLP_end(word i + k), each
//              Linear(H, 4H), ReLU, Linear(4H, H); rep = MLP_out(relu([s, e])), Linear(2H, 4H),
//              ReLU, Linear(4H, H)
//     marker   (SpanMarker): the MLPs Linear(H, 2H), ReLU, Linear(2H, H); rep = Linear(2H, H) of
//              relu([s, e])
//   logit[i, k, c] = rep(i, k) · prompt c; GLiNER's decoder takes the sigmoid.
// Dropout is inactive at inference. The last Linear of each span representation is folded into
// the prompt side (rep · p = hidden · (Wᵀ p) + b · p), so no [W, K, H] tensor is built; the
// products are the same up to float rounding.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "kernels/matmul.h"
#include "model/layers/lstm.h"
#include "weights/weight_store.h"

namespace onepass::model::heads {

enum class SpanMode { kMarker, kMarkerV0 };

struct SpanHeadConfig {
  int backbone_hidden = 0;  // the backbone's hidden_size
  int hidden_size = 0;      // gliner_config.json's hidden_size
  int max_width = 0;
  SpanMode span_mode = SpanMode::kMarkerV0;
  int num_rnn_layers = 1;  // 0: no LSTM
  bool embed_ent_token = true;
  std::int32_t class_token_index = -1;  // the <<ENT>> id
};

// One nn.Linear of the head, or the columns [column, column + in) of one (the halves of a span
// representation's first Linear, which reads [start, end]), run by the engine's Linear kernel
// over many rows at once. Owns its copy of the weights (the kernel reads them in place).
struct SpanDense {
  int in = 0, out = 0;
  std::vector<float> weight;  // [out][in]
  std::vector<float> bias;    // [out]; empty without
  kernels::Linear linear;
  SpanDense() = default;
  // `stored_in`: the checkpoint's in_features (the slice's when 0).
  SpanDense(const weights::WeightStore& store, const std::string& name, int in, int out,
            kernels::Activation act = kernels::Activation::kIdentity, int stored_in = 0,
            int column = 0, bool with_bias = true);
  SpanDense(SpanDense&&) noexcept = default;
  SpanDense& operator=(SpanDense&&) noexcept = default;
  // y [rows, out] = act(x [rows, in] · Wᵀ + b).
  void forward(const float* x, std::size_t rows, float* y) const;
};

class SpanHead {
 public:
  // Reads the head's weights (GLiNER's state-dict names) from `store`; throws kInvalidModel
  // naming a missing or misshapen tensor.
  SpanHead(const weights::WeightStore& store, const SpanHeadConfig& config);

  const SpanHeadConfig& config() const { return config_; }

  // One sequence: `tokens` [ids.size(), backbone_hidden] its last hidden states, `word_positions`
  // the token index of each word's first sub-token. Appends [W, max_width, C] logits to `out`
  // (C = the <<ENT>> tokens among `ids`); a span past the last word gets 0 and is never read.
  void score(const float* tokens, std::span<const std::int32_t> ids,
             std::span<const std::int32_t> word_positions, std::vector<float>& out) const;

 private:
  std::vector<float> mlp(const SpanDense& first, const SpanDense& second, const float* x,
                         std::size_t rows) const;

  SpanHeadConfig config_;
  bool projects_ = false;
  SpanDense projection_;
  BiLstm rnn_;
  SpanDense start_1_, start_2_, end_1_, end_2_;
  // The span representation's first Linear split by the half of [start, end] it reads (the
  // bias with the start half); markerV0's second Linear, folded into the prompts.
  SpanDense out_start_, out_end_, out_2_;
  SpanDense prompt_1_, prompt_2_;
};

}  // namespace onepass::model::heads
