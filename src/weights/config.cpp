#include "weights/config.h"

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "base/error.h"

namespace onepass::weights {
namespace {

using nlohmann::json;

[[noreturn]] void fail(const std::string& problem) {
  throw Error(ErrorKind::kInvalidModel, "config.json: " + problem);
}

// Each reader leaves `out` unchanged when the key is absent or null (null is how transformers
// writes "use the default", e.g. classifier_dropout).
void read_int(const json& j, const char* key, int& out) {
  const auto it = j.find(key);
  if (it == j.end() || it->is_null()) return;
  if (!it->is_number_integer()) fail(std::string("field ") + key + " must be an integer");
  const auto v = it->get<std::int64_t>();
  if (v < -(1ll << 31) || v > (1ll << 31) - 1)
    fail(std::string("field ") + key + " is out of range");
  out = static_cast<int>(v);
}

void read_double(const json& j, const char* key, double& out) {
  const auto it = j.find(key);
  if (it == j.end() || it->is_null()) return;
  if (!it->is_number()) fail(std::string("field ") + key + " must be a number");
  out = it->get<double>();
}

void read_bool(const json& j, const char* key, bool& out) {
  const auto it = j.find(key);
  if (it == j.end() || it->is_null()) return;
  if (!it->is_boolean()) fail(std::string("field ") + key + " must be true or false");
  out = it->get<bool>();
}

void read_string(const json& j, const char* key, std::string& out) {
  const auto it = j.find(key);
  if (it == j.end() || it->is_null()) return;
  if (!it->is_string()) fail(std::string("field ") + key + " must be a string");
  out = it->get<std::string>();
}

std::vector<std::string> read_string_list(const json& value, const char* key) {
  if (!value.is_array()) fail(std::string("field ") + key + " must be a list of strings");
  std::vector<std::string> out;
  for (const auto& item : value) {
    if (!item.is_string()) fail(std::string("field ") + key + " must be a list of strings");
    out.push_back(item.get<std::string>());
  }
  return out;
}

// DebertaV2Config accepts pos_att_type as a list or as "p2c|c2p".
std::vector<std::string> read_pos_att_type(const json& j) {
  const auto it = j.find("pos_att_type");
  if (it == j.end() || it->is_null()) return {};
  if (it->is_string()) {
    std::vector<std::string> parts;
    std::stringstream ss(it->get<std::string>());
    std::string part;
    while (std::getline(ss, part, '|')) {
      if (!part.empty()) parts.push_back(part);
    }
    return parts;
  }
  return read_string_list(*it, "pos_att_type");
}

void read_labels(const json& j, ModelConfig& config) {
  const auto it = j.find("id2label");
  if (it != j.end() && !it->is_null()) {
    if (!it->is_object()) fail("field id2label must be an object");
    if (it->size() > 100000) fail("field id2label has too many labels");
    config.id2label.assign(it->size(), std::string());
    std::vector<bool> seen(it->size(), false);
    for (const auto& [key, value] : it->items()) {
      std::size_t pos = 0;
      long long id = -1;
      try {
        id = std::stoll(key, &pos);
      } catch (const std::exception&) {
        pos = 0;
      }
      if (pos != key.size() || id < 0 || id >= static_cast<long long>(it->size()) || seen[id]) {
        fail("id2label keys must be the ids 0.." + std::to_string(it->size() - 1));
      }
      if (!value.is_string()) fail("id2label values must be strings");
      seen[id] = true;
      config.id2label[id] = value.get<std::string>();
    }
    config.num_labels = static_cast<int>(config.id2label.size());
    return;
  }
  // PretrainedConfig: num_labels (default 2) creates LABEL_0..LABEL_{n-1}.
  read_int(j, "num_labels", config.num_labels);
  if (config.num_labels < 0 || config.num_labels > 100000) fail("field num_labels is out of range");
  for (int i = 0; i < config.num_labels; ++i)
    config.id2label.push_back(default_label_name(static_cast<std::size_t>(i)));
}

void apply_model_type_defaults(ModelConfig& c) {
  if (c.model_type == "deberta-v2") {
    c.vocab_size = 128100;
    c.hidden_size = 1536;
    c.num_hidden_layers = 24;
    c.num_attention_heads = 24;
    c.intermediate_size = 6144;
    c.type_vocab_size = 0;
    c.layer_norm_eps = 1e-7;
    c.pad_token_id = 0;
  } else if (c.model_type == "electra") {
    // ElectraConfig's defaults (electra-small's generator shape); embeddings_project exists
    // when embedding_size != hidden_size.
    c.embedding_size = 128;
    c.hidden_size = 256;
    c.num_attention_heads = 4;
    c.intermediate_size = 1024;
    c.pad_token_id = 0;
  } else if (c.model_type == "roberta" || c.model_type == "xlm-roberta") {
    c.pad_token_id = 1;
  } else {
    c.pad_token_id = 0;
  }
}

// DistilBertConfig names its sizes differently (attribute_map maps them to the common names);
// its defaults at v4.47.1: dim 768, n_layers 6, n_heads 12, hidden_dim 3072, activation gelu.
// It has no token types, and its LayerNorms use eps 1e-12 whatever the file says.
void read_distilbert(const json& j, ModelConfig& c) {
  c.hidden_size = 768;
  c.num_hidden_layers = 6;
  c.num_attention_heads = 12;
  c.intermediate_size = 3072;
  c.hidden_act = "gelu";
  read_int(j, "dim", c.hidden_size);
  read_int(j, "n_layers", c.num_hidden_layers);
  read_int(j, "n_heads", c.num_attention_heads);
  read_int(j, "hidden_dim", c.intermediate_size);
  read_string(j, "activation", c.hidden_act);
  c.type_vocab_size = 0;
  c.layer_norm_eps = 1e-12;
  c.pooler_hidden_size = c.hidden_size;
  // sinusoidal_pos_embds only changes how the position table is initialised: the table itself
  // is in the checkpoint either way.
}

void validate(const ModelConfig& c) {
  auto positive = [](int v, const char* key) {
    if (v <= 0) fail(std::string("field ") + key + " must be positive");
  };
  positive(c.vocab_size, "vocab_size");
  positive(c.hidden_size, "hidden_size");
  positive(c.num_hidden_layers, "num_hidden_layers");
  positive(c.num_attention_heads, "num_attention_heads");
  positive(c.intermediate_size, "intermediate_size");
  positive(c.max_position_embeddings, "max_position_embeddings");
  positive(c.pooler_hidden_size, "pooler_hidden_size");
  if (c.type_vocab_size < 0) fail("field type_vocab_size must not be negative");
  if (c.hidden_size % c.num_attention_heads != 0) {
    fail("hidden_size " + std::to_string(c.hidden_size) +
         " is not a multiple of num_attention_heads " + std::to_string(c.num_attention_heads));
  }
  if (!(c.layer_norm_eps >= 0.0)) fail("field layer_norm_eps must not be negative");
  if (c.embedding_size < 0) fail("field embedding_size must not be negative");
  if (c.conv_kernel_size < 0) fail("field conv_kernel_size must not be negative");
  if (c.conv_groups <= 0) fail("field conv_groups must be positive");
}

}  // namespace

ModelConfig parse_model_config(std::string_view json_text, const ConfigCheck& before_validation) {
  json j = json::parse(json_text.begin(), json_text.end(), nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) fail("not valid JSON");
  if (!j.is_object()) fail("not a JSON object");

  ModelConfig c;
  read_string(j, "model_type", c.model_type);
  apply_model_type_defaults(c);
  if (const auto it = j.find("architectures"); it != j.end() && !it->is_null()) {
    c.architectures = read_string_list(*it, "architectures");
  }
  read_labels(j, c);
  read_string(j, "problem_type", c.problem_type);
  if (const auto it = j.find("pad_token_id"); it != j.end()) {
    if (it->is_null()) {
      c.pad_token_id.reset();
    } else {
      int pad = 0;
      read_int(j, "pad_token_id", pad);
      c.pad_token_id = pad;
    }
  }

  read_int(j, "vocab_size", c.vocab_size);
  read_int(j, "hidden_size", c.hidden_size);
  read_int(j, "num_hidden_layers", c.num_hidden_layers);
  read_int(j, "num_attention_heads", c.num_attention_heads);
  read_int(j, "intermediate_size", c.intermediate_size);
  read_string(j, "hidden_act", c.hidden_act);
  read_int(j, "max_position_embeddings", c.max_position_embeddings);
  read_int(j, "type_vocab_size", c.type_vocab_size);
  read_double(j, "layer_norm_eps", c.layer_norm_eps);
  read_string(j, "position_embedding_type", c.position_embedding_type);

  read_bool(j, "relative_attention", c.relative_attention);
  read_int(j, "max_relative_positions", c.max_relative_positions);
  read_int(j, "position_buckets", c.position_buckets);
  c.pos_att_type = read_pos_att_type(j);
  read_bool(j, "share_att_key", c.share_att_key);
  read_string(j, "norm_rel_ebd", c.norm_rel_ebd);
  read_bool(j, "position_biased_input", c.position_biased_input);
  read_int(j, "embedding_size", c.embedding_size);
  read_int(j, "conv_kernel_size", c.conv_kernel_size);
  read_string(j, "conv_act", c.conv_act);
  read_int(j, "conv_groups", c.conv_groups);
  c.pooler_hidden_size =
      c.hidden_size;  // DebertaV2Config: kwargs.get("pooler_hidden_size", hidden_size)
  read_int(j, "pooler_hidden_size", c.pooler_hidden_size);
  read_string(j, "pooler_hidden_act", c.pooler_hidden_act);
  read_double(j, "pooler_dropout", c.pooler_dropout);
  if (c.model_type == "distilbert") read_distilbert(j, c);

  if (before_validation) before_validation(c);
  validate(c);
  return c;
}

ModelConfig load_model_config(const std::filesystem::path& model_dir,
                              const ConfigCheck& before_validation) {
  const auto path = model_dir / "config.json";
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(ErrorKind::kNotFound, "the model folder has no config.json");
  std::stringstream buffer;
  buffer << in.rdbuf();
  return parse_model_config(buffer.str(), before_validation);
}

}  // namespace onepass::weights
