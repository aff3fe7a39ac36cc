// config.json of a Hugging Face model folder: parsed once (ConfigFields), then read into a typed
// config. The fields every architecture has live here (ModelConfig: PretrainedConfig's labels and
// problem_type, and the encoder sizes under BERT's names); each architecture family owns its own
// config struct, its defaults and its own fields beside its code
// (src/model/architectures/<family>/*_config.h), read from the same ConfigFields. Field names are
// transformers' own, verbatim.
#pragma once

#include <cstddef>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace onepass::weights {

struct ModelConfig;

// The one parse of a config.json text: a JSON object with typed field readers. Every reader
// leaves `out` unchanged when the key is absent or null (null is how transformers writes "use
// the default", e.g. classifier_dropout) and throws onepass::Error(kInvalidModel) naming the
// field when it has the wrong type.
class ConfigFields {
 public:
  // Throws kInvalidModel for text that is not JSON or not a JSON object.
  explicit ConfigFields(std::string_view json_text);
  ~ConfigFields();
  ConfigFields(const ConfigFields&) = delete;
  ConfigFields& operator=(const ConfigFields&) = delete;

  void read(const char* key, int& out) const;
  void read(const char* key, double& out) const;
  void read(const char* key, bool& out) const;
  void read(const char* key, std::string& out) const;
  void read(const char* key, std::vector<std::string>& out) const;  // a list of strings
  // null is None here (pad_token_id: null), distinct from an absent key.
  void read(const char* key, std::optional<int>& out) const;
  // The field's JSON object as fields of its own (GTE's rope_scaling); null when the field is
  // absent or null, kInvalidModel when it is not an object.
  std::unique_ptr<ConfigFields> object(const char* key) const;
  // The field's JSON object as JSON text (GLiNER's encoder_config, a config.json of its own);
  // nullopt when the field is absent or null, kInvalidModel when it is not an object.
  std::optional<std::string> object_text(const char* key) const;
  // The field is a JSON string (and not a list, say).
  bool holds_string(const char* key) const;
  // The field is present and null (ModernBERT's local_rope_theta: null means "the global one",
  // an absent key the class default).
  bool holds_null(const char* key) const;

 private:
  friend ModelConfig parse_pretrained_config(std::string_view json_text);
  struct Json;
  // object()'s: a sub-object of a parse already checked, taken as it is.
  explicit ConfigFields(std::unique_ptr<Json> json);
  std::unique_ptr<Json> json_;
};

// The fields every supported architecture's config has. An architecture family sets its config
// class's defaults and reads its own fields on top (ArchitectureFamily::read_config).
struct ModelConfig {
  // PretrainedConfig
  std::vector<std::string> architectures;
  std::string model_type;
  std::vector<std::string> id2label;  // index = class id; LABEL_i filled in when absent
  int num_labels = 2;                 // id2label.size()
  std::string problem_type;           // "", "regression", "single_label_classification",
                                      // "multi_label_classification"
  std::optional<int> pad_token_id;
  // sentence-transformers' CrossEncoder activation of the logits, a torch.nn class path:
  // sentence_transformers.activation_fn (v4 and later), else sbert_ce_default_activation_function
  // (earlier releases); "" when neither is there.
  std::string cross_encoder_activation;

  // The encoder sizes (BERT's names; DistilBERT maps its own, as its attribute_map does). The
  // defaults here are BertConfig's; each family sets its own before reading.
  int vocab_size = 30522;
  int hidden_size = 768;
  int num_hidden_layers = 12;
  int num_attention_heads = 12;
  int intermediate_size = 3072;
  std::string hidden_act = "gelu";
  int max_position_embeddings = 512;
  int type_vocab_size = 2;
  double layer_norm_eps = 1e-12;

  // The parse these were read from: the family's own config reads its fields from it.
  std::shared_ptr<const ConfigFields> fields;

  int head_dim() const { return hidden_size / num_attention_heads; }
  bool multi_label() const { return problem_type == "multi_label_classification"; }
};

// transformers' name for a label config.json does not name: PretrainedConfig fills id2label with
// LABEL_0..LABEL_{n-1} from num_labels. Inline: the post-processing (model/heads/postprocess.h),
// built without this library in the fuzz build, names labels the same way.
inline std::string default_label_name(std::size_t index) {
  return "LABEL_" + std::to_string(index);
}

// Parses config.json text and reads the PretrainedConfig fields (architectures, model_type,
// id2label / num_labels, problem_type); the sizes keep BertConfig's defaults until a family
// reads them. Throws kInvalidModel naming the field (invalid JSON, a field of the wrong type,
// id2label keys that are not 0..n-1).
ModelConfig parse_pretrained_config(std::string_view json_text);

// Reads DIR/config.json as parse_pretrained_config does; kNotFound when it is missing.
ModelConfig load_pretrained_config(const std::filesystem::path& model_dir);

// Reads pad_token_id and the encoder sizes under BERT's field names over the values `config`
// holds (the family's defaults).
void read_encoder_sizes(ModelConfig& config);

// Throws kInvalidModel for impossible sizes: non-positive sizes, hidden_size not divisible by
// num_attention_heads, a negative type_vocab_size or layer_norm_eps.
void validate_encoder_sizes(const ModelConfig& config);

// Throws kInvalidModel "config.json: <problem>": for a family's own checks.
[[noreturn]] void config_error(const std::string& problem);

}  // namespace onepass::weights
