#include "model/heads/span_head.h"

#include <algorithm>

#include "base/error.h"

namespace onepass::model::heads {

SpanDense::SpanDense(const weights::WeightStore& store, const std::string& name, int in_features,
                     int out_features, kernels::Activation act, int stored_in, int column,
                     bool with_bias)
    : in(in_features), out(out_features) {
  if (stored_in == 0) stored_in = in_features;
  const auto w = store.get(name + ".weight", {out_features, stored_in});
  const auto rows = static_cast<std::size_t>(out), cols = static_cast<std::size_t>(in);
  const auto stride = static_cast<std::size_t>(stored_in);
  weight.resize(rows * cols);
  for (std::size_t o = 0; o < rows; ++o)
    for (std::size_t i = 0; i < cols; ++i)
      weight[o * cols + i] = w.data[o * stride + static_cast<std::size_t>(column) + i];
  if (with_bias) {
    const auto b = store.get(name + ".bias", {out_features});
    bias.assign(b.data, b.data + rows);
  }
  linear = kernels::Linear(weight.data(), bias.empty() ? nullptr : bias.data(), out, in, act);
}

void SpanDense::forward(const float* x, std::size_t rows, float* y) const {
  if (rows == 0) return;
  linear.forward(x, static_cast<std::int64_t>(rows), y);
}

namespace {

void relu(std::vector<float>& v) {
  for (float& x : v) x = std::max(x, 0.0f);
}

float dot(const float* a, const float* b, std::size_t n) {
  float s = 0.0f;
  for (std::size_t i = 0; i < n; ++i) s += a[i] * b[i];
  return s;
}

}  // namespace

SpanHead::SpanHead(const weights::WeightStore& store, const SpanHeadConfig& config)
    : config_(config) {
  const int h = config.hidden_size;
  projects_ = config.hidden_size != config.backbone_hidden;
  const auto relu_act = kernels::Activation::kRelu;
  if (projects_)
    projection_ = SpanDense(store, "token_rep_layer.projection", config.backbone_hidden, h);
  if (config.num_rnn_layers > 0) {
    // LstmSeq2SeqEncoder: hidden_size // 2 per direction.
    if (h % 2 != 0)
      throw Error(ErrorKind::kInvalidModel, "gliner_config.json: hidden_size must be even");
    rnn_ = BiLstm(store, "rnn.lstm.", h, h / 2, config.num_rnn_layers);
  }
  const std::string span = "span_rep_layer.span_rep_layer.";
  const int inner = config.span_mode == SpanMode::kMarkerV0 ? 4 * h : 2 * h;
  start_1_ = SpanDense(store, span + "project_start.0", h, inner, relu_act);
  start_2_ = SpanDense(store, span + "project_start.3", inner, h);
  end_1_ = SpanDense(store, span + "project_end.0", h, inner, relu_act);
  end_2_ = SpanDense(store, span + "project_end.3", inner, h);
  const bool v0 = config.span_mode == SpanMode::kMarkerV0;
  const std::string out = span + (v0 ? "out_project.0" : "out_project");
  const int out_width = v0 ? 4 * h : h;
  out_start_ = SpanDense(store, out, h, out_width, kernels::Activation::kIdentity, 2 * h, 0, true);
  out_end_ = SpanDense(store, out, h, out_width, kernels::Activation::kIdentity, 2 * h, h, false);
  if (v0) out_2_ = SpanDense(store, span + "out_project.3", 4 * h, h);
  prompt_1_ = SpanDense(store, "prompt_rep_layer.0", h, 4 * h, relu_act);
  prompt_2_ = SpanDense(store, "prompt_rep_layer.3", 4 * h, h);
}

// Linear, ReLU, Linear on each of `rows` rows of x.
std::vector<float> SpanHead::mlp(const SpanDense& first, const SpanDense& second, const float* x,
                                 std::size_t rows) const {
  std::vector<float> hidden(rows * static_cast<std::size_t>(first.out));
  std::vector<float> y(rows * static_cast<std::size_t>(second.out));
  first.forward(x, rows, hidden.data());  // the ReLU is the kernel's
  second.forward(hidden.data(), rows, y.data());
  return y;
}

void SpanHead::score(const float* tokens, std::span<const std::int32_t> ids,
                     std::span<const std::int32_t> word_positions, std::vector<float>& out) const {
  const auto h = static_cast<std::size_t>(config_.hidden_size);
  const auto hb = static_cast<std::size_t>(config_.backbone_hidden);
  const std::size_t words = word_positions.size();
  const auto width = static_cast<std::size_t>(config_.max_width);

  // The rows GLiNER reads: each word's first sub-token, each label's <<ENT>> (or the token
  // after it), through the projection when there is one.
  std::vector<std::size_t> prompt_rows;
  for (std::size_t t = 0; t < ids.size(); ++t) {
    if (ids[t] != config_.class_token_index) continue;
    const std::size_t row = config_.embed_ent_token ? t : t + 1;
    ONEPASS_CHECK(row < ids.size(), "a prompt token inside the sequence");
    prompt_rows.push_back(row);
  }
  const std::size_t labels = prompt_rows.size();
  auto gather = [&](auto&& row_of, std::size_t n) {
    std::vector<float> rows(n * h);
    for (std::size_t i = 0; i < n; ++i) {
      const auto row = static_cast<std::size_t>(row_of(i));
      ONEPASS_CHECK(row < ids.size(), "a word position inside the sequence");
      const float* src = tokens + row * hb;
      if (projects_) {
        projection_.forward(src, 1, rows.data() + i * h);
      } else {
        std::copy(src, src + h, rows.data() + i * h);
      }
    }
    return rows;
  };
  std::vector<float> word_states = gather([&](std::size_t i) { return word_positions[i]; }, words);
  const std::vector<float> prompt_states =
      gather([&](std::size_t i) { return prompt_rows[i]; }, labels);
  if (!rnn_.empty()) word_states = rnn_.forward(word_states.data(), words);

  const std::vector<float> prompts = mlp(prompt_1_, prompt_2_, prompt_states.data(), labels);
  std::vector<float> starts = mlp(start_1_, start_2_, word_states.data(), words);
  std::vector<float> ends = mlp(end_1_, end_2_, word_states.data(), words);
  relu(starts);  // SpanMarker(V0): torch.cat([start, end]).relu()
  relu(ends);

  const std::size_t base = out.size();
  out.resize(base + words * width * labels, 0.0f);
  float* logits = out.data() + base;
  if (config_.span_mode == SpanMode::kMarker) {
    // rep(i, j) · p = (W_s s_i + b) · p + (W_e e_j) · p.
    // The bias rides with the start half: W_s s_i + b.
    std::vector<float> start_rep(words * h), end_rep(words * h);
    out_start_.forward(starts.data(), words, start_rep.data());
    out_end_.forward(ends.data(), words, end_rep.data());
    std::vector<float> start_part(words * labels), end_part(words * labels);
    for (std::size_t w = 0; w < words; ++w) {
      for (std::size_t c = 0; c < labels; ++c) {
        start_part[w * labels + c] = dot(start_rep.data() + w * h, prompts.data() + c * h, h);
        end_part[w * labels + c] = dot(end_rep.data() + w * h, prompts.data() + c * h, h);
      }
    }
    for (std::size_t i = 0; i < words; ++i)
      for (std::size_t k = 0; k < width && i + k < words; ++k)
        for (std::size_t c = 0; c < labels; ++c)
          logits[(i * width + k) * labels + c] =
              start_part[i * labels + c] + end_part[(i + k) * labels + c];
    return;
  }
  // markerV0: hidden(i, j) = relu(W1_s s_i + W1_e e_j + b1) [4H]; rep · p = hidden · (W2ᵀ p)
  // + b2 · p.
  const std::size_t inner = 4 * h;
  std::vector<float> a(words * inner), b(words * inner);
  out_start_.forward(starts.data(), words, a.data());
  out_end_.forward(ends.data(), words, b.data());
  // folded[c] = W2ᵀ p_c: the rows of W2 [H][4H] scaled by p_c and summed.
  std::vector<float> folded(labels * inner, 0.0f), bias_part(labels);
  for (std::size_t c = 0; c < labels; ++c) {
    const float* p = prompts.data() + c * h;
    float* f = folded.data() + c * inner;
    for (std::size_t o = 0; o < h; ++o) {
      const float* row = out_2_.weight.data() + o * inner;
      for (std::size_t i = 0; i < inner; ++i) f[i] += p[o] * row[i];
    }
    bias_part[c] = dot(out_2_.bias.data(), p, h);
  }
  std::vector<float> hidden(inner);
  for (std::size_t i = 0; i < words; ++i) {
    for (std::size_t k = 0; k < width && i + k < words; ++k) {
      const float* ai = a.data() + i * inner;
      const float* bj = b.data() + (i + k) * inner;
      for (std::size_t m = 0; m < inner; ++m) hidden[m] = std::max(ai[m] + bj[m], 0.0f);
      for (std::size_t c = 0; c < labels; ++c)
        logits[(i * width + k) * labels + c] =
            dot(hidden.data(), folded.data() + c * inner, inner) + bias_part[c];
    }
  }
}

}  // namespace onepass::model::heads
