// Naive DeBERTa-v2 model (DebertaV2Model / DebertaV2ForSequenceClassification, transformers
// v4.47.1) for one unpadded sequence: plain loops in the order the Hugging Face modules run,
// reading its own copy of config.json, so neither the engine's config parser nor its kernels
// are trusted. The oracle for the config switches the fixture does not exercise.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace onepass::testing::deberta_ref {

struct ModelSetup {
  int vocab_size = 0;
  int hidden_size = 0;
  int embedding_size = 0;  // getattr(config, "embedding_size", hidden_size)
  int num_hidden_layers = 0;
  int num_attention_heads = 0;
  int intermediate_size = 0;
  int max_position_embeddings = 512;
  int type_vocab_size = 0;
  float layer_norm_eps = 1e-7f;
  std::string hidden_act = "gelu";
  bool relative_attention = false;
  int position_buckets = -1;
  int max_relative_positions = -1;  // as in config.json (resolved inside)
  bool c2p = false;
  bool p2c = false;
  bool share_att_key = false;
  bool norm_rel_ebd = false;  // "layer_norm" in norm_rel_ebd.split("|")
  bool position_biased_input = true;
  int conv_kernel_size = 0;
  int conv_groups = 1;
  std::string conv_act = "tanh";
  int pooler_hidden_size = 0;
  std::string pooler_hidden_act = "gelu";
  bool classifier = false;  // DebertaV2ForSequenceClassification (weights under "deberta.")
};

// Reads the fields above from config.json text with DebertaV2Config's defaults.
ModelSetup parse_setup(const std::string& config_json);

// A tensor by its state_dict name, flattened row-major.
using TensorSource = std::function<std::vector<float>(const std::string& name)>;

// Classifier: the logits [num_labels]. Base model: last_hidden_state [L, hidden].
std::vector<float> forward(const ModelSetup& setup, const TensorSource& tensors,
                           const std::vector<std::int32_t>& input_ids,
                           const std::vector<std::int32_t>& token_type_ids);

}  // namespace onepass::testing::deberta_ref
