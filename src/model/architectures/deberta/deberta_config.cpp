#include "model/architectures/deberta/deberta_config.h"

#include <algorithm>
#include <cctype>
#include <string>

namespace onepass::model {
namespace {

// DebertaConfig turns a string pos_att_type into [x.strip() for x in s.lower().split("|")]
// (empty items kept: they count for the attention scale) and keeps a list as it is.
std::vector<std::string> pos_att_type_of(const weights::ConfigFields& f) {
  std::vector<std::string> items;
  if (!f.holds_string("pos_att_type")) {
    f.read("pos_att_type", items);
    return items;
  }
  std::string text;
  f.read("pos_att_type", text);
  std::transform(text.begin(), text.end(), text.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  std::size_t start = 0;
  while (true) {
    const std::size_t end = std::min(text.find('|', start), text.size());
    std::string item = text.substr(start, end - start);
    item.erase(0, item.find_first_not_of(" \t\n\r\f\v"));
    item.erase(item.find_last_not_of(" \t\n\r\f\v") + 1);
    items.push_back(item);
    if (end == text.size()) return items;
    start = end + 1;
  }
}

}  // namespace

void read_deberta_family_config(weights::ModelConfig& config) {
  // DebertaConfig's defaults are deberta-base's shape (BertConfig's but 50265 ids, eps 1e-7,
  // no token types).
  config.vocab_size = 50265;
  config.type_vocab_size = 0;
  config.layer_norm_eps = 1e-7;
  config.pad_token_id = 0;
  weights::read_encoder_sizes(config);
  deberta_config(config);  // refuses its own impossible fields before load too
}

DebertaV2Config deberta_config(const weights::ModelConfig& config) {
  DebertaV2Config c;
  static_cast<weights::ModelConfig&>(c) = config;
  const weights::ConfigFields& f = *config.fields;
  f.read("relative_attention", c.relative_attention);
  f.read("max_relative_positions", c.max_relative_positions);
  c.pos_att_type = pos_att_type_of(f);
  // scale_factor = 1 + len(self.pos_att_type)
  c.score_terms = static_cast<int>(c.pos_att_type.size());
  f.read("position_biased_input", c.position_biased_input);
  c.embedding_size = c.hidden_size;  // getattr(config, "embedding_size", hidden_size)
  f.read("embedding_size", c.embedding_size);
  c.pooler_hidden_size = c.hidden_size;
  f.read("pooler_hidden_size", c.pooler_hidden_size);
  f.read("pooler_hidden_act", c.pooler_hidden_act);
  f.read("pooler_dropout", c.pooler_dropout);
  f.read("legacy", c.legacy);  // DebertaForMaskedLM's head layout, as DeBERTa-v2's
  // v1 has none of these; the v2 encoder's "off" values.
  c.position_buckets = -1;
  c.share_att_key = false;
  c.norm_rel_ebd = "none";
  c.conv_kernel_size = 0;

  if (c.embedding_size <= 0) weights::config_error("field embedding_size must be positive");
  if (c.pooler_hidden_size <= 0) weights::config_error("field pooler_hidden_size must be positive");
  return c;
}

}  // namespace onepass::model
