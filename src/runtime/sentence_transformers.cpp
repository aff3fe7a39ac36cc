#include "runtime/sentence_transformers.h"

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <system_error>

#include "base/error.h"

namespace onepass::runtime {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// sentence_bert_config.json first; the others are what older sentence-transformers releases
// named it after the model type (TEI reads the same list, in this order).
constexpr const char* kMaxLengthFiles[] = {
    "sentence_bert_config.json",       "sentence_roberta_config.json",
    "sentence_distilbert_config.json", "sentence_camembert_config.json",
    "sentence_albert_config.json",     "sentence_xlm-roberta_config.json",
    "sentence_xlnet_config.json",
};

// The file's JSON, nullopt when there is no such file; a JSON object unless `list`.
std::optional<json> read_optional_json(const fs::path& dir, const std::string& name,
                                       bool list = false) {
  const fs::path file = dir / name;
  std::error_code ec;
  if (!fs::is_regular_file(file, ec)) return std::nullopt;
  std::ifstream in(file, std::ios::binary);
  if (!in) throw Error(ErrorKind::kInvalidModel, name + " cannot be read");
  std::stringstream buffer;
  buffer << in.rdbuf();
  json parsed = json::parse(buffer.str(), nullptr, /*allow_exceptions=*/false);
  if (parsed.is_discarded() || (list ? !parsed.is_array() : !parsed.is_object())) {
    throw Error(ErrorKind::kInvalidModel,
                name + (list ? " is not a JSON list" : " is not a JSON object"));
  }
  return parsed;
}

[[noreturn]] void wrong_type(const std::string& file, const char* field, const char* expected) {
  throw Error(ErrorKind::kInvalidModel,
              file + ": \"" + std::string(field) + "\" must be " + expected);
}

void read_pooling(const fs::path& dir, SentenceTransformersConfig& config) {
  const std::string name = "1_Pooling/config.json";
  const auto pooling = read_optional_json(dir, name);
  if (!pooling) return;
  auto flag = [&](const char* key, bool fallback) {
    auto it = pooling->find(key);
    if (it == pooling->end() || it->is_null()) return fallback;
    if (!it->is_boolean()) wrong_type(name, key, "true or false");
    return it->get<bool>();
  };
  if (flag("pooling_mode_cls_token", false)) {
    config.pooling = Pooling::kCls;
  } else if (flag("pooling_mode_mean_tokens", false)) {
    config.pooling = Pooling::kMean;
  } else {
    throw Error(ErrorKind::kUnsupported, name + " asks for a pooling other than cls or mean");
  }
  config.pooling_includes_prompt = flag("include_prompt", true);
}

void read_max_seq_length(const fs::path& dir, SentenceTransformersConfig& config) {
  for (const char* name : kMaxLengthFiles) {
    const auto file = read_optional_json(dir, name);
    if (!file) continue;
    auto it = file->find("max_seq_length");
    if (it == file->end() || it->is_null()) return;
    if (!it->is_number_integer() || it->get<std::int64_t>() < 1)
      wrong_type(name, "max_seq_length", "a positive integer");
    config.max_seq_length = it->get<std::size_t>();
    return;
  }
}

void read_prompts(const fs::path& dir, SentenceTransformersConfig& config) {
  const std::string name = "config_sentence_transformers.json";
  const auto file = read_optional_json(dir, name);
  if (!file) return;
  if (auto it = file->find("prompts"); it != file->end() && !it->is_null()) {
    if (!it->is_object()) wrong_type(name, "prompts", "an object of names to texts");
    for (const auto& [prompt_name, text] : it->items()) {
      if (!text.is_string()) wrong_type(name, "prompts", "an object of names to texts");
      config.prompts.emplace(prompt_name, text.get<std::string>());
    }
  }
  if (auto it = file->find("default_prompt_name"); it != file->end() && !it->is_null()) {
    if (!it->is_string()) wrong_type(name, "default_prompt_name", "a prompt's name");
    const std::string prompt_name = it->get<std::string>();
    if (!config.prompts.count(prompt_name)) {
      throw Error(ErrorKind::kInvalidModel,
                  name + ": default_prompt_name '" + prompt_name + "' is not one of its prompts");
    }
    config.default_prompt_name = prompt_name;
  }
}

// modules.json: [{"idx", "name", "path", "type"}, ...], the pipeline encode() runs in order.
void read_modules(const fs::path& dir, SentenceTransformersConfig& config) {
  const auto modules = read_optional_json(dir, "modules.json", /*list=*/true);
  if (!modules) return;
  for (const auto& module : *modules) {
    if (!module.is_object() || !module.contains("type") || !module["type"].is_string())
      wrong_type("modules.json", "type", "a module's class name");
    config.normalizes = module["type"] == "sentence_transformers.models.Normalize";
  }
}

}  // namespace

SentenceTransformersConfig read_sentence_transformers_config(const fs::path& dir) {
  SentenceTransformersConfig config;
  read_pooling(dir, config);
  read_max_seq_length(dir, config);
  read_prompts(dir, config);
  read_modules(dir, config);
  return config;
}

}  // namespace onepass::runtime
