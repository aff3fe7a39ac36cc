#include "weights/config.h"

#include <cstdint>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <utility>

#include "base/error.h"
#include "base/read_file.h"

namespace onepass::weights {

struct ConfigFields::Json {
  nlohmann::json value;
};

void config_error(const std::string& problem) {
  throw Error(ErrorKind::kInvalidModel, "config.json: " + problem);
}

namespace {

[[noreturn]] void field_error(const char* key, const char* must_be) {
  config_error(std::string("field ") + key + " must be " + must_be);
}

}  // namespace

ConfigFields::ConfigFields(std::string_view json_text) : json_(std::make_unique<Json>()) {
  json_->value = nlohmann::json::parse(json_text.begin(), json_text.end(), nullptr,
                                       /*allow_exceptions=*/false);
  if (json_->value.is_discarded()) config_error("not valid JSON");
  if (!json_->value.is_object()) config_error("not a JSON object");
}

ConfigFields::ConfigFields(std::unique_ptr<Json> json) : json_(std::move(json)) {}

ConfigFields::~ConfigFields() = default;

void ConfigFields::read(const char* key, int& out) const {
  const auto it = json_->value.find(key);
  if (it == json_->value.end() || it->is_null()) return;
  if (!it->is_number_integer()) field_error(key, "an integer");
  const auto v = it->get<std::int64_t>();
  if (v < -(1ll << 31) || v > (1ll << 31) - 1)
    config_error(std::string("field ") + key + " is out of range");
  out = static_cast<int>(v);
}

void ConfigFields::read(const char* key, double& out) const {
  const auto it = json_->value.find(key);
  if (it == json_->value.end() || it->is_null()) return;
  if (!it->is_number()) field_error(key, "a number");
  out = it->get<double>();
}

void ConfigFields::read(const char* key, bool& out) const {
  const auto it = json_->value.find(key);
  if (it == json_->value.end() || it->is_null()) return;
  if (!it->is_boolean()) field_error(key, "true or false");
  out = it->get<bool>();
}

void ConfigFields::read(const char* key, std::string& out) const {
  const auto it = json_->value.find(key);
  if (it == json_->value.end() || it->is_null()) return;
  if (!it->is_string()) field_error(key, "a string");
  out = it->get<std::string>();
}

void ConfigFields::read(const char* key, std::vector<std::string>& out) const {
  const auto it = json_->value.find(key);
  if (it == json_->value.end() || it->is_null()) return;
  if (!it->is_array()) field_error(key, "a list of strings");
  std::vector<std::string> list;
  for (const auto& item : *it) {
    if (!item.is_string()) field_error(key, "a list of strings");
    list.push_back(item.get<std::string>());
  }
  out = std::move(list);
}

void ConfigFields::read(const char* key, std::optional<int>& out) const {
  const auto it = json_->value.find(key);
  if (it == json_->value.end()) return;
  if (it->is_null()) {
    out.reset();
    return;
  }
  int value = 0;
  read(key, value);
  out = value;
}

std::unique_ptr<ConfigFields> ConfigFields::object(const char* key) const {
  const auto it = json_->value.find(key);
  if (it == json_->value.end() || it->is_null()) return nullptr;
  if (!it->is_object()) field_error(key, "an object");
  auto json = std::make_unique<Json>();
  json->value = *it;
  return std::unique_ptr<ConfigFields>(new ConfigFields(std::move(json)));
}

std::optional<std::string> ConfigFields::object_text(const char* key) const {
  const auto it = json_->value.find(key);
  if (it == json_->value.end() || it->is_null()) return std::nullopt;
  if (!it->is_object()) field_error(key, "an object");
  return it->dump();
}

bool ConfigFields::holds_string(const char* key) const {
  const auto it = json_->value.find(key);
  return it != json_->value.end() && it->is_string();
}

bool ConfigFields::holds_null(const char* key) const {
  const auto it = json_->value.find(key);
  return it != json_->value.end() && it->is_null();
}

namespace {

// id2label keys must be exactly the ids 0..n-1; without id2label, PretrainedConfig makes
// LABEL_0..LABEL_{n-1} from num_labels (default 2).
void read_labels(const ConfigFields& fields, const nlohmann::json& j, ModelConfig& config) {
  const auto it = j.find("id2label");
  if (it != j.end() && !it->is_null()) {
    if (!it->is_object()) config_error("field id2label must be an object");
    if (it->size() > 100000) config_error("field id2label has too many labels");
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
        config_error("id2label keys must be the ids 0.." + std::to_string(it->size() - 1));
      }
      if (!value.is_string()) config_error("id2label values must be strings");
      seen[id] = true;
      config.id2label[id] = value.get<std::string>();
    }
    config.num_labels = static_cast<int>(config.id2label.size());
    return;
  }
  fields.read("num_labels", config.num_labels);
  if (config.num_labels < 0 || config.num_labels > 100000)
    config_error("field num_labels is out of range");
  for (int i = 0; i < config.num_labels; ++i)
    config.id2label.push_back(default_label_name(static_cast<std::size_t>(i)));
}

}  // namespace

ModelConfig parse_pretrained_config(std::string_view json_text) {
  auto fields = std::make_shared<const ConfigFields>(json_text);
  ModelConfig c;
  fields->read("model_type", c.model_type);
  fields->read("architectures", c.architectures);
  read_labels(*fields, fields->json_->value, c);
  fields->read("problem_type", c.problem_type);
  if (const auto st = fields->object("sentence_transformers"))
    st->read("activation_fn", c.cross_encoder_activation);
  if (c.cross_encoder_activation.empty())
    fields->read("sbert_ce_default_activation_function", c.cross_encoder_activation);
  c.fields = std::move(fields);
  return c;
}

ModelConfig load_pretrained_config(const std::filesystem::path& model_dir) {
  const auto path = model_dir / "config.json";
  const auto text = read_file_if_present(path, kSettingsFileLimitBytes);
  if (!text) throw Error(ErrorKind::kNotFound, "the model folder has no config.json");
  return parse_pretrained_config(*text);
}

void read_encoder_sizes(ModelConfig& c) {
  const ConfigFields& f = *c.fields;
  f.read("pad_token_id", c.pad_token_id);
  f.read("vocab_size", c.vocab_size);
  f.read("hidden_size", c.hidden_size);
  f.read("num_hidden_layers", c.num_hidden_layers);
  f.read("num_attention_heads", c.num_attention_heads);
  f.read("intermediate_size", c.intermediate_size);
  f.read("hidden_act", c.hidden_act);
  f.read("max_position_embeddings", c.max_position_embeddings);
  f.read("type_vocab_size", c.type_vocab_size);
  f.read("layer_norm_eps", c.layer_norm_eps);
}

void validate_encoder_sizes(const ModelConfig& c) {
  auto positive = [](int v, const char* key) {
    if (v <= 0) config_error(std::string("field ") + key + " must be positive");
  };
  positive(c.vocab_size, "vocab_size");
  positive(c.hidden_size, "hidden_size");
  positive(c.num_hidden_layers, "num_hidden_layers");
  positive(c.num_attention_heads, "num_attention_heads");
  positive(c.intermediate_size, "intermediate_size");
  positive(c.max_position_embeddings, "max_position_embeddings");
  if (c.type_vocab_size < 0) config_error("field type_vocab_size must not be negative");
  if (c.hidden_size % c.num_attention_heads != 0) {
    config_error("hidden_size " + std::to_string(c.hidden_size) +
                 " is not a multiple of num_attention_heads " +
                 std::to_string(c.num_attention_heads));
  }
  if (!(c.layer_norm_eps >= 0.0)) config_error("field layer_norm_eps must not be negative");
}

}  // namespace onepass::weights
