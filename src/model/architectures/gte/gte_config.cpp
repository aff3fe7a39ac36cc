#include "model/architectures/gte/gte_config.h"

#include <cmath>
#include <memory>
#include <string>

#include "base/error.h"

namespace onepass::model {
namespace {

void unsupported(const std::string& what) {
  throw Error(ErrorKind::kUnsupported, "config.json: " + what + " is not supported for GTE");
}

}  // namespace

void read_gte_family_config(weights::ModelConfig& config) {
  // NewConfig's defaults where they differ from BertConfig's.
  config.vocab_size = 30528;
  config.max_position_embeddings = 2048;
  config.type_vocab_size = 1;
  weights::read_encoder_sizes(config);
  weights::validate_encoder_sizes(config);
  gte_config(config);  // refuses the branches this engine does not run before any load
}

GteConfig gte_config(const weights::ModelConfig& config) {
  GteConfig c;
  static_cast<weights::ModelConfig&>(c) = config;
  const weights::ConfigFields& f = *config.fields;
  std::string text = "rope";
  f.read("position_embedding_type", text);
  if (text != "rope") unsupported("position_embedding_type " + text);
  text = "layer_norm";
  f.read("layer_norm_type", text);
  if (text != "layer_norm") unsupported("layer_norm_type " + text);
  bool flag = true;
  f.read("pack_qkv", flag);
  if (!flag) unsupported("pack_qkv false (separate q_proj, k_proj, v_proj)");
  flag = false;
  f.read("logn_attention_scale", flag);
  if (flag) unsupported("logn_attention_scale true");

  f.read("rope_theta", c.rope_theta);
  if (!(c.rope_theta > 0.0)) weights::config_error("field rope_theta must be positive");
  if (const auto scaling = f.object("rope_scaling")) {
    std::string type;
    scaling->read("type", type);
    if (type != "ntk") unsupported("rope_scaling type '" + type + "'");
    // mixed_b absent or null: the fixed scaling; a number: the mixed one.
    double mixed_b = std::nan("");
    scaling->read("mixed_b", mixed_b);
    if (!std::isnan(mixed_b)) unsupported("rope_scaling mixed_b (mixed NTK scaling)");
    c.ntk_factor = 0.0;
    scaling->read("factor", c.ntk_factor);
    if (c.ntk_factor == 0.0) weights::config_error("field rope_scaling needs a factor");
    if (!(c.ntk_factor >= 1.0)) unsupported("rope_scaling factor below 1");
  }
  if (c.head_dim() % 2 != 0)
    weights::config_error("rotary positions need hidden_size / num_attention_heads even");
  return c;
}

}  // namespace onepass::model
