// torch.nn.LSTM, bidirectional, batch_first, as GLiNER's LstmSeq2SeqEncoder runs it over the
// words of one text (gliner/modeling/layers.py): each layer reads the whole sequence forwards
// and backwards and concatenates the two hidden states per step, [steps, 2 hidden]; the next
// layer reads that. One sequence at a time, so no packing or padding: the backward direction
// starts at the sequence's own last word, as pack_padded_sequence makes it do.
//
// Gates as torch orders them in weight_ih_l{k} [4 hidden, input] and weight_hh_l{k}
// [4 hidden, hidden]: input, forget, cell, output; c' = f c + i g, h' = o tanh(c').
// Thread-safety: forward() is const.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "weights/weight_store.h"

namespace onepass::model {

class BiLstm {
 public:
  BiLstm() = default;
  // Reads `prefix` + weight_ih_l0, weight_hh_l0, bias_ih_l0, bias_hh_l0 and their _reverse for
  // each layer; throws kInvalidModel naming a missing or misshapen tensor.
  BiLstm(const weights::WeightStore& store, const std::string& prefix, int input_size,
         int hidden_size, int num_layers);

  int output_size() const { return 2 * hidden_; }
  bool empty() const { return layers_.empty(); }

  // x [steps, input_size] -> [steps, 2 hidden_size].
  std::vector<float> forward(const float* x, std::size_t steps) const;

 private:
  struct Direction {
    std::vector<float> w_ih_t;  // [input][4 hidden]: transposed for a vectorised axpy
    std::vector<float> w_hh_t;  // [hidden][4 hidden]
    std::vector<float> bias;    // bias_ih + bias_hh, [4 hidden]
  };
  struct Layer {
    int input = 0;
    Direction forward, backward;
  };
  void run_direction(const Layer& layer, const Direction& d, const float* x, std::size_t steps,
                     bool reverse, float* out) const;

  int hidden_ = 0;
  std::vector<Layer> layers_;
};

}  // namespace onepass::model
