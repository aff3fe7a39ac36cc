#include "model/layers/lstm.h"

#include <cmath>

namespace onepass::model {
namespace {

std::vector<float> transposed(const weights::WeightView& w, std::int64_t rows, std::int64_t cols) {
  std::vector<float> out(static_cast<std::size_t>(rows * cols));
  for (std::int64_t r = 0; r < rows; ++r)
    for (std::int64_t c = 0; c < cols; ++c) out[c * rows + r] = w.data[r * cols + c];
  return out;
}

float sigmoid(float x) { return 1.0f / (1.0f + std::exp(-x)); }

}  // namespace

BiLstm::BiLstm(const weights::WeightStore& store, const std::string& prefix, int input_size,
               int hidden_size, int num_layers)
    : hidden_(hidden_size) {
  const std::int64_t gates = 4LL * hidden_size;
  int input = input_size;
  for (int l = 0; l < num_layers; ++l) {
    Layer layer;
    layer.input = input;
    for (const bool reverse : {false, true}) {
      const std::string suffix = "_l" + std::to_string(l) + (reverse ? "_reverse" : "");
      Direction d;
      d.w_ih_t = transposed(store.get(prefix + "weight_ih" + suffix, {gates, input}), gates, input);
      d.w_hh_t = transposed(store.get(prefix + "weight_hh" + suffix, {gates, hidden_size}), gates,
                            hidden_size);
      const auto b_ih = store.get(prefix + "bias_ih" + suffix, {gates});
      const auto b_hh = store.get(prefix + "bias_hh" + suffix, {gates});
      d.bias.resize(static_cast<std::size_t>(gates));
      for (std::int64_t g = 0; g < gates; ++g) d.bias[g] = b_ih.data[g] + b_hh.data[g];
      (reverse ? layer.backward : layer.forward) = std::move(d);
    }
    layers_.push_back(std::move(layer));
    input = 2 * hidden_size;
  }
}

void BiLstm::run_direction(const Layer& layer, const Direction& d, const float* x,
                           std::size_t steps, bool reverse, float* out) const {
  const auto hidden = static_cast<std::size_t>(hidden_);
  const std::size_t gates = 4 * hidden;
  const auto input = static_cast<std::size_t>(layer.input);
  std::vector<float> h(hidden, 0.0f), c(hidden, 0.0f), z(gates);
  for (std::size_t n = 0; n < steps; ++n) {
    const std::size_t t = reverse ? steps - 1 - n : n;
    z = d.bias;
    const float* xt = x + t * input;
    for (std::size_t i = 0; i < input; ++i) {
      const float v = xt[i];
      const float* row = d.w_ih_t.data() + i * gates;
      for (std::size_t g = 0; g < gates; ++g) z[g] += v * row[g];
    }
    for (std::size_t i = 0; i < hidden; ++i) {
      const float v = h[i];
      const float* row = d.w_hh_t.data() + i * gates;
      for (std::size_t g = 0; g < gates; ++g) z[g] += v * row[g];
    }
    for (std::size_t k = 0; k < hidden; ++k) {
      const float in = sigmoid(z[k]);
      const float forget = sigmoid(z[hidden + k]);
      const float cell = std::tanh(z[2 * hidden + k]);
      const float output = sigmoid(z[3 * hidden + k]);
      c[k] = forget * c[k] + in * cell;
      h[k] = output * std::tanh(c[k]);
    }
    float* o = out + t * 2 * hidden + (reverse ? hidden : 0);
    for (std::size_t k = 0; k < hidden; ++k) o[k] = h[k];
  }
}

std::vector<float> BiLstm::forward(const float* x, std::size_t steps) const {
  std::vector<float> in(
      x, x + steps * static_cast<std::size_t>(layers_.empty() ? 0 : layers_[0].input));
  std::vector<float> out;
  for (const Layer& layer : layers_) {
    out.assign(steps * 2 * static_cast<std::size_t>(hidden_), 0.0f);
    run_direction(layer, layer.forward, in.data(), steps, false, out.data());
    run_direction(layer, layer.backward, in.data(), steps, true, out.data());
    in.swap(out);
  }
  return in;
}

}  // namespace onepass::model
