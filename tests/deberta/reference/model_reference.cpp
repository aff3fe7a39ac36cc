#include "reference/model_reference.h"

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>

#include "reference/attention_reference.h"

namespace onepass::testing::deberta_ref {
namespace {

using Matrix = std::vector<float>;  // row-major, shape carried by the caller

float act(const std::string& name, float x) {
  const double v = x;
  if (name == "gelu") return static_cast<float>(0.5 * v * (1.0 + std::erf(v / std::sqrt(2.0))));
  if (name == "gelu_new" || name == "gelu_pytorch_tanh" || name == "gelu_fast")
    return static_cast<float>(
        0.5 * v * (1.0 + std::tanh(std::sqrt(2.0 / M_PI) * (v + 0.044715 * v * v * v))));
  if (name == "quick_gelu") return static_cast<float>(v / (1.0 + std::exp(-1.702 * v)));
  if (name == "relu") return x > 0 ? x : 0.0f;
  if (name == "silu" || name == "swish") return static_cast<float>(v / (1.0 + std::exp(-v)));
  if (name == "tanh") return static_cast<float>(std::tanh(v));
  if (name == "sigmoid") return static_cast<float>(1.0 / (1.0 + std::exp(-v)));
  if (name == "linear") return x;
  throw std::runtime_error("reference: unknown activation " + name);
}

// nn.Linear: y[rows, out] = x[rows, in] . W^T + b (b optional).
Matrix linear(const Matrix& x, int rows, int in, const Matrix& w, const Matrix* b, int out) {
  Matrix y(static_cast<std::size_t>(rows) * out);
  for (int r = 0; r < rows; ++r) {
    for (int o = 0; o < out; ++o) {
      double s = b ? (*b)[o] : 0.0;
      for (int t = 0; t < in; ++t) s += static_cast<double>(x[r * in + t]) * w[o * in + t];
      y[r * out + o] = static_cast<float>(s);
    }
  }
  return y;
}

void layer_norm(Matrix& x, int rows, int cols, const Matrix& g, const Matrix& b, float eps) {
  for (int r = 0; r < rows; ++r) {
    float* row = &x[static_cast<std::size_t>(r) * cols];
    double mean = 0, var = 0;
    for (int c = 0; c < cols; ++c) mean += row[c];
    mean /= cols;
    for (int c = 0; c < cols; ++c) var += (row[c] - mean) * (row[c] - mean);
    var /= cols;
    const double inv = 1.0 / std::sqrt(var + eps);
    for (int c = 0; c < cols; ++c) row[c] = static_cast<float>((row[c] - mean) * inv * g[c] + b[c]);
  }
}

struct Names {
  std::string p;
  std::string operator()(const std::string& s) const { return p + s; }
};

}  // namespace

ModelSetup parse_setup(const std::string& config_json) {
  const auto j = nlohmann::json::parse(config_json);
  ModelSetup s;
  s.vocab_size = j.value("vocab_size", 128100);
  s.hidden_size = j.value("hidden_size", 1536);
  s.embedding_size = j.value("embedding_size", s.hidden_size);
  s.num_hidden_layers = j.value("num_hidden_layers", 24);
  s.num_attention_heads = j.value("num_attention_heads", 24);
  s.intermediate_size = j.value("intermediate_size", 6144);
  s.max_position_embeddings = j.value("max_position_embeddings", 512);
  s.type_vocab_size = j.value("type_vocab_size", 0);
  s.layer_norm_eps = static_cast<float>(j.value("layer_norm_eps", 1e-7));
  s.hidden_act = j.value("hidden_act", "gelu");
  s.relative_attention = j.value("relative_attention", false);
  s.position_buckets = j.value("position_buckets", -1);
  s.max_relative_positions = j.value("max_relative_positions", -1);
  std::vector<std::string> types;
  if (j.contains("pos_att_type") && j["pos_att_type"].is_string()) {
    std::stringstream ss(j["pos_att_type"].get<std::string>());
    for (std::string t; std::getline(ss, t, '|');) types.push_back(t);
  } else if (j.contains("pos_att_type") && j["pos_att_type"].is_array()) {
    types = j["pos_att_type"].get<std::vector<std::string>>();
  }
  for (auto& t : types) {
    t.erase(std::remove(t.begin(), t.end(), ' '), t.end());
    std::transform(t.begin(), t.end(), t.begin(), ::tolower);
  }
  s.c2p = std::find(types.begin(), types.end(), "c2p") != types.end();
  s.p2c = std::find(types.begin(), types.end(), "p2c") != types.end();
  s.share_att_key = j.value("share_att_key", false);
  std::string norm = j.value("norm_rel_ebd", "none");
  std::transform(norm.begin(), norm.end(), norm.begin(), ::tolower);
  std::stringstream ns(norm);
  for (std::string t; std::getline(ns, t, '|');) {
    t.erase(std::remove(t.begin(), t.end(), ' '), t.end());
    if (t == "layer_norm") s.norm_rel_ebd = true;
  }
  s.position_biased_input = j.value("position_biased_input", true);
  s.conv_kernel_size = j.value("conv_kernel_size", 0);
  s.conv_groups = j.value("conv_groups", 1);
  s.conv_act = j.value("conv_act", "tanh");
  s.pooler_hidden_size = j.value("pooler_hidden_size", s.hidden_size);
  s.pooler_hidden_act = j.value("pooler_hidden_act", "gelu");
  const auto archs = j.value("architectures", std::vector<std::string>{});
  s.classifier = !archs.empty() && archs[0] == "DebertaV2ForSequenceClassification";
  return s;
}

std::vector<float> forward(const ModelSetup& s, const TensorSource& t,
                           const std::vector<std::int32_t>& ids,
                           const std::vector<std::int32_t>& types) {
  const Names n{s.classifier ? "deberta." : ""};
  const int len = static_cast<int>(ids.size());
  const int hid = s.hidden_size;
  const int emb = s.embedding_size;

  // DebertaV2Embeddings: word (+ position) (+ token type), embed_proj, LayerNorm; mask all 1.
  const Matrix word = t(n("embeddings.word_embeddings.weight"));
  Matrix x(static_cast<std::size_t>(len) * emb);
  for (int i = 0; i < len; ++i)
    for (int c = 0; c < emb; ++c) x[i * emb + c] = word[static_cast<std::size_t>(ids[i]) * emb + c];
  if (s.position_biased_input) {
    const Matrix pos = t(n("embeddings.position_embeddings.weight"));
    for (int i = 0; i < len; ++i)
      for (int c = 0; c < emb; ++c) x[i * emb + c] += pos[i * emb + c];
  }
  if (s.type_vocab_size > 0) {
    const Matrix tt = t(n("embeddings.token_type_embeddings.weight"));
    for (int i = 0; i < len; ++i) {
      const int type = types.empty() ? 0 : types[i];
      for (int c = 0; c < emb; ++c) x[i * emb + c] += tt[type * emb + c];
    }
  }
  if (emb != hid) x = linear(x, len, emb, t(n("embeddings.embed_proj.weight")), nullptr, hid);
  layer_norm(x, len, hid, t(n("embeddings.LayerNorm.weight")), t(n("embeddings.LayerNorm.bias")),
             s.layer_norm_eps);
  const Matrix embedding_output = x;

  // DebertaV2Encoder.get_rel_embedding: the whole table, LayerNorm'd when norm_rel_ebd says so.
  const int max_rel =
      s.max_relative_positions < 1 ? s.max_position_embeddings : s.max_relative_positions;
  const int att_span = s.position_buckets > 0 ? s.position_buckets : max_rel;
  Matrix rel;
  if (s.relative_attention) {
    rel = t(n("encoder.rel_embeddings.weight"));
    const int rows = static_cast<int>(rel.size()) / hid;
    if (s.norm_rel_ebd)
      layer_norm(rel, rows, hid, t(n("encoder.LayerNorm.weight")), t(n("encoder.LayerNorm.bias")),
                 s.layer_norm_eps);
    rel.resize(static_cast<std::size_t>(2) * att_span * hid);  // rel_embeddings[0 : 2 span]
  }
  const bool c2p = s.relative_attention && s.c2p;
  const bool p2c = s.relative_attention && s.p2c;
  const int heads = s.num_attention_heads;
  const int d = hid / heads;

  for (int layer = 0; layer < s.num_hidden_layers; ++layer) {
    const Names a{n("encoder.layer." + std::to_string(layer) + ".attention.")};
    const Matrix wq = t(a("self.query_proj.weight")), bq = t(a("self.query_proj.bias"));
    const Matrix wk = t(a("self.key_proj.weight")), bk = t(a("self.key_proj.bias"));
    const Matrix wv = t(a("self.value_proj.weight")), bv = t(a("self.value_proj.bias"));
    const Matrix q = linear(x, len, hid, wq, &bq, hid);
    const Matrix k = linear(x, len, hid, wk, &bk, hid);
    const Matrix v = linear(x, len, hid, wv, &bv, hid);
    Matrix pos_key, pos_query;
    const int rows = 2 * att_span;
    if (c2p || p2c) {
      if (s.share_att_key) {
        pos_key = linear(rel, rows, hid, wk, &bk, hid);
        pos_query = linear(rel, rows, hid, wq, &bq, hid);
      } else {
        if (c2p) {
          const Matrix b = t(a("self.pos_key_proj.bias"));
          pos_key = linear(rel, rows, hid, t(a("self.pos_key_proj.weight")), &b, hid);
        }
        if (p2c) {
          const Matrix b = t(a("self.pos_query_proj.bias"));
          pos_query = linear(rel, rows, hid, t(a("self.pos_query_proj.weight")), &b, hid);
        }
      }
    }
    const AttentionSetup setup{s.position_buckets, max_rel, c2p, p2c, int(s.c2p) + int(s.p2c)};
    Matrix context(static_cast<std::size_t>(len) * hid);
    const auto head_of = [d, hid](const Matrix& m, int r, int h) {
      const int count = static_cast<int>(m.size()) / hid;
      Matrix out(static_cast<std::size_t>(count) * d);
      for (int i = 0; i < count; ++i)
        for (int c = 0; c < d; ++c) out[i * d + c] = m[i * hid + h * d + c];
      (void)r;
      return out;
    };
    for (int h = 0; h < heads; ++h) {
      const Matrix ctx =
          attention_head(setup, len, d, head_of(q, len, h), head_of(k, len, h), head_of(v, len, h),
                         pos_key.empty() ? Matrix{} : head_of(pos_key, rows, h),
                         pos_query.empty() ? Matrix{} : head_of(pos_query, rows, h));
      for (int i = 0; i < len; ++i)
        for (int c = 0; c < d; ++c) context[i * hid + h * d + c] = ctx[i * d + c];
    }
    // DebertaV2SelfOutput: LayerNorm(dense(context) + input)
    const Matrix bo = t(a("output.dense.bias"));
    Matrix attn = linear(context, len, hid, t(a("output.dense.weight")), &bo, hid);
    for (std::size_t e = 0; e < attn.size(); ++e) attn[e] += x[e];
    layer_norm(attn, len, hid, t(a("output.LayerNorm.weight")), t(a("output.LayerNorm.bias")),
               s.layer_norm_eps);
    // DebertaV2Intermediate + DebertaV2Output
    const Names l{n("encoder.layer." + std::to_string(layer) + ".")};
    const Matrix bi = t(l("intermediate.dense.bias"));
    Matrix inter =
        linear(attn, len, hid, t(l("intermediate.dense.weight")), &bi, s.intermediate_size);
    for (auto& e : inter) e = act(s.hidden_act, e);
    const Matrix bo2 = t(l("output.dense.bias"));
    Matrix out = linear(inter, len, s.intermediate_size, t(l("output.dense.weight")), &bo2, hid);
    for (std::size_t e = 0; e < out.size(); ++e) out[e] += attn[e];
    layer_norm(out, len, hid, t(l("output.LayerNorm.weight")), t(l("output.LayerNorm.bias")),
               s.layer_norm_eps);

    if (layer == 0 && s.conv_kernel_size > 0) {
      // ConvLayer(embedding_output, layer 0 output): Conv1d with zero padding (k - 1) / 2 over
      // the layer's input, activation, LayerNorm(residual + conv).
      const int ks = s.conv_kernel_size;
      const int pad = (ks - 1) / 2;
      const int group_in = hid / s.conv_groups;
      const Matrix w = t(n("encoder.conv.conv.weight"));  // [hid, hid / groups, ks]
      const Matrix b = t(n("encoder.conv.conv.bias"));
      Matrix conv(static_cast<std::size_t>(len) * hid);
      for (int i = 0; i < len; ++i) {
        for (int o = 0; o < hid; ++o) {
          const int g = o / (hid / s.conv_groups);
          double acc = b[o];
          for (int c = 0; c < group_in; ++c) {
            for (int tap = 0; tap < ks; ++tap) {
              const int src = i + tap - pad;
              if (src < 0 || src >= len) continue;
              acc += static_cast<double>(w[(o * group_in + c) * ks + tap]) *
                     embedding_output[src * hid + g * group_in + c];
            }
          }
          conv[i * hid + o] = act(s.conv_act, static_cast<float>(acc));
        }
      }
      for (std::size_t e = 0; e < out.size(); ++e) out[e] += conv[e];
      layer_norm(out, len, hid, t(n("encoder.conv.LayerNorm.weight")),
                 t(n("encoder.conv.LayerNorm.bias")), s.layer_norm_eps);
    }
    x = out;
  }
  if (!s.classifier) return x;

  // ContextPooler on the first token, then the classifier.
  const int ph = s.pooler_hidden_size;
  const Matrix first(x.begin(), x.begin() + hid);
  const Matrix pb = t("pooler.dense.bias");
  Matrix pooled = linear(first, 1, ph, t("pooler.dense.weight"), &pb, ph);
  for (auto& e : pooled) e = act(s.pooler_hidden_act, e);
  const Matrix cw = t("classifier.weight");
  const Matrix cb = t("classifier.bias");
  return linear(pooled, 1, ph, cw, &cb, static_cast<int>(cb.size()));
}

}  // namespace onepass::testing::deberta_ref
