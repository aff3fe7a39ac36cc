#include "model/architectures/nomic_bert/nomic_bert_config.h"

#include <cmath>
#include <sstream>
#include <string>

#include "base/error.h"

namespace onepass::model {
namespace {

void unsupported(const std::string& what) {
  throw Error(ErrorKind::kUnsupported, "config.json: " + what + " is not supported for NomicBERT");
}

// A config value as JSON writes it: 2, 0.5.
std::string number(double value) {
  std::ostringstream out;
  out << value;
  return out.str();
}

// The remote code's MLP width: n_inner, or GPT2Config's null meaning 4 n_embd (plain MLP) and
// int(8 n_embd / 3) (gated); a gated MLP rounds it up to a multiple of 256 (NomciBertGatedMLP).
int mlp_width(const weights::ConfigFields& f, int hidden, bool gated) {
  int width = gated ? 8 * hidden / 3 : 4 * hidden;
  f.read("n_inner", width);
  if (width <= 0) weights::config_error("field n_inner must be positive");
  return gated ? (width + 255) / 256 * 256 : width;
}

}  // namespace

void read_nomic_bert_family_config(weights::ModelConfig& config) {
  // GPT2Config's defaults, then NomicBertConfig's.
  config.vocab_size = 50257;
  config.hidden_size = 768;
  config.num_hidden_layers = 12;
  config.num_attention_heads = 12;
  config.max_position_embeddings = 1024;
  config.layer_norm_eps = 1e-5;
  config.type_vocab_size = 2;
  const weights::ConfigFields& f = *config.fields;
  f.read("pad_token_id", config.pad_token_id);
  f.read("vocab_size", config.vocab_size);
  f.read("n_embd", config.hidden_size);
  f.read("n_layer", config.num_hidden_layers);
  f.read("n_head", config.num_attention_heads);
  f.read("n_positions", config.max_position_embeddings);
  f.read("layer_norm_epsilon", config.layer_norm_eps);
  f.read("type_vocab_size", config.type_vocab_size);
  config.hidden_act = "gelu_new";
  f.read("activation_function", config.hidden_act);
  // NomicBertModel pads the vocabulary to a multiple of pad_vocab_size_multiple (its embedding
  // has that many rows; the Hub configs already hold the padded size).
  int multiple = 1;
  f.read("pad_vocab_size_multiple", multiple);
  if (multiple <= 0) weights::config_error("field pad_vocab_size_multiple must be positive");
  config.vocab_size = (config.vocab_size + multiple - 1) / multiple * multiple;
  // from_pretrained: no position limit with rotary positions means 2048.
  if (config.max_position_embeddings <= 0) config.max_position_embeddings = 2048;
  const NomicBertConfig typed = nomic_bert_config(config);
  config.intermediate_size = typed.intermediate_size;
  weights::validate_encoder_sizes(config);
}

NomicBertConfig nomic_bert_config(const weights::ModelConfig& config) {
  NomicBertConfig c;
  static_cast<weights::ModelConfig&>(c) = config;
  const weights::ConfigFields& f = *config.fields;
  auto refuse_true = [&](const char* key) {
    bool value = false;
    f.read(key, value);
    if (value) unsupported(std::string(key) + " true");
  };
  refuse_true("prenorm");
  refuse_true("parallel_block");
  refuse_true("use_rms_norm");
  refuse_true("rotary_emb_interleaved");
  refuse_true("causal");
  refuse_true("norm_mlp");
  refuse_true("rotary_head_dim");
  double scale_base = 0.0;
  f.read("rotary_emb_scale_base", scale_base);
  if (scale_base != 0.0) unsupported("rotary_emb_scale_base " + number(scale_base));
  f.read("rotary_scaling_factor", c.rotary.scaling_factor);
  f.read("max_trained_positions", c.rotary.max_trained_positions);
  if (c.rotary.scaling_factor < 0.0)
    weights::config_error("field rotary_scaling_factor must not be negative");
  if (c.rotary.max_trained_positions <= 0)
    weights::config_error("field max_trained_positions must be positive");
  int moe_every = 0;
  f.read("moe_every_n_layers", moe_every);
  if (moe_every > 0) unsupported("moe_every_n_layers (mixture of experts)");
  int kv_heads = config.num_attention_heads;
  f.read("num_heads_kv", kv_heads);
  if (kv_heads != config.num_attention_heads) unsupported("num_heads_kv other than n_head");
  double fraction = 0.0;
  f.read("rotary_emb_fraction", fraction);
  if (fraction != 1.0) {
    unsupported("rotary_emb_fraction " + number(fraction) +
                " (rotary positions on the whole head only)");
  }
  f.read("rotary_emb_base", c.rotary.base);
  if (!(c.rotary.base > 0.0)) weights::config_error("field rotary_emb_base must be positive");
  f.read("qkv_proj_bias", c.qkv_bias);
  f.read("mlp_fc1_bias", c.fc1_bias);
  f.read("mlp_fc2_bias", c.fc2_bias);
  // NomicBertBlock: swiglu gates with silu, geglu with (erf) GELU, glu with a sigmoid; any other
  // value runs the plain MLP with F.gelu, the erf GELU, whatever GELU variant it names.
  const std::string& act = config.hidden_act;
  if (act == "glu") unsupported("activation_function glu");
  if (act != "swiglu" && act != "geglu" && act != "gelu" && act != "gelu_new" &&
      act != "gelu_fast" && act != "gelu_pytorch_tanh") {
    unsupported("activation_function " + act);
  }
  c.gated_mlp = act == "swiglu" || act == "geglu";
  c.mlp_activation = act == "swiglu" ? kernels::Activation::kSilu : kernels::Activation::kGeluErf;
  c.intermediate_size = mlp_width(f, config.hidden_size, c.gated_mlp);
  if (config.num_attention_heads <= 0) weights::config_error("field n_head must be positive");
  if (config.hidden_size % config.num_attention_heads != 0 || c.head_dim() % 2 != 0)
    weights::config_error("rotary positions need n_embd / n_head even");
  c.rotary.head_dim = c.head_dim();
  return c;
}

double NomicBertRotary::base_for(std::int64_t length) const {
  if (!scales(length)) return base;
  const double f = scaling_factor;
  const auto d = static_cast<double>(head_dim);
  const double stretch = f * static_cast<double>(length) / max_trained_positions - (f - 1.0);
  return base * std::pow(stretch, d / (d - 2.0));
}

}  // namespace onepass::model
