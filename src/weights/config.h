// config.json of a Hugging Face model folder as a typed struct. Field names are transformers'
// own, verbatim; a field absent from the file takes the default of the config class that
// model_type selects (BertConfig, XLMRobertaConfig/RobertaConfig, DebertaV2Config at v4.47.1), or
// the getattr() default of the modeling code for the DeBERTa fields the config class does not
// declare (share_att_key, position_buckets, norm_rel_ebd, conv_*).
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace onepass::weights {

struct ModelConfig {
  // PretrainedConfig
  std::vector<std::string> architectures;
  std::string model_type;
  std::vector<std::string> id2label;  // index = class id; LABEL_i filled in when absent
  int num_labels = 2;                 // id2label.size()
  std::string problem_type;           // "", "regression", "single_label_classification",
                                      // "multi_label_classification"
  std::optional<int> pad_token_id;

  // Shared by BERT, RoBERTa, XLM-R and DeBERTa-v2
  int vocab_size = 30522;
  int hidden_size = 768;
  int num_hidden_layers = 12;
  int num_attention_heads = 12;
  int intermediate_size = 3072;
  std::string hidden_act = "gelu";
  int max_position_embeddings = 512;
  int type_vocab_size = 2;
  double layer_norm_eps = 1e-12;
  std::string position_embedding_type = "absolute";  // BERT family; only "absolute" runs

  // DebertaV2Config
  bool relative_attention = false;
  int max_relative_positions = -1;
  int position_buckets = -1;
  std::vector<std::string> pos_att_type;  // subset/order of "c2p", "p2c" (string "c2p|p2c" split)
  bool share_att_key = false;
  std::string norm_rel_ebd = "none";  // "none" or e.g. "layer_norm"
  bool position_biased_input = true;
  int embedding_size = 0;  // DeBERTa: getattr(.., hidden_size), 0: hidden_size; ELECTRA: 128
  int conv_kernel_size = 0;
  std::string conv_act = "tanh";
  int conv_groups = 1;
  int pooler_hidden_size = 768;  // default: hidden_size
  std::string pooler_hidden_act = "gelu";
  double pooler_dropout = 0.0;

  int head_dim() const { return hidden_size / num_attention_heads; }
  bool multi_label() const { return problem_type == "multi_label_classification"; }
};

// transformers' name for a label config.json does not name: PretrainedConfig fills id2label with
// LABEL_0..LABEL_{n-1} from num_labels. Inline: the post-processing (model/heads/postprocess.h),
// built without this library in the fuzz build, names labels the same way.
inline std::string default_label_name(std::size_t index) {
  return "LABEL_" + std::to_string(index);
}

// Runs on the fields as read, before the sizes are validated: the loader refuses an
// architecture it does not have there, so that a foreign config (GPT-2's) is named unsupported
// rather than misshapen by the defaults of an encoder it is not.
using ConfigCheck = std::function<void(const ModelConfig&)>;

// Parses config.json text. Throws onepass::Error(kInvalidModel) naming the field for invalid
// JSON, a field of the wrong type or an impossible value (hidden_size not divisible by
// num_attention_heads, non-positive sizes, id2label keys that are not 0..n-1), or what
// `before_validation` throws.
ModelConfig parse_model_config(std::string_view json_text,
                               const ConfigCheck& before_validation = {});

// Reads DIR/config.json; kNotFound when it is missing.
ModelConfig load_model_config(const std::filesystem::path& model_dir,
                              const ConfigCheck& before_validation = {});

}  // namespace onepass::weights
