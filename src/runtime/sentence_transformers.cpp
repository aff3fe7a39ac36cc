#include "runtime/sentence_transformers.h"

#include <cstdint>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string_view>
#include <system_error>

#include "base/error.h"
#include "base/read_file.h"

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
  const auto text = read_file_if_present(file, kSettingsFileLimitBytes);
  if (!text) return std::nullopt;
  json parsed = json::parse(*text, nullptr, /*allow_exceptions=*/false);
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

void read_pooling(const fs::path& dir, const std::string& module_path,
                  SentenceTransformersConfig& config) {
  const std::string name = module_path + "/config.json";
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

// A module's folder as modules.json names it: relative, and inside the model folder (a Hub
// repository's modules.json is not trusted to point elsewhere).
std::string module_folder(const json& module) {
  auto it = module.find("path");
  if (it == module.end() || !it->is_string()) wrong_type("modules.json", "path", "a folder name");
  const fs::path path(it->get<std::string>());
  for (const auto& part : path) {
    if (part == "..") wrong_type("modules.json", "path", "a folder inside the model folder");
  }
  if (path.is_absolute()) wrong_type("modules.json", "path", "a folder inside the model folder");
  return path.lexically_normal().generic_string();
}

// <path>/config.json of a Dense module: {"in_features", "out_features", "bias",
// "activation_function"}, as sentence-transformers' Dense.save writes it.
model::heads::DenseModuleConfig read_dense(const fs::path& dir, const std::string& path) {
  const std::string name = path + "/config.json";
  const auto file = read_optional_json(dir, name);
  if (!file)
    throw Error(ErrorKind::kInvalidModel, "modules.json names a Dense module without " + name);
  model::heads::DenseModuleConfig dense;
  dense.path = path;
  auto width = [&](const char* key) {
    auto it = file->find(key);
    if (it == file->end() || !it->is_number_integer() || it->get<std::int64_t>() < 1 ||
        it->get<std::int64_t>() > (1 << 20))
      wrong_type(name, key, "a positive integer");
    return it->get<int>();
  };
  dense.in_features = width("in_features");
  dense.out_features = width("out_features");
  if (auto it = file->find("bias"); it != file->end()) {
    if (!it->is_boolean()) wrong_type(name, "bias", "true or false");
    dense.bias = it->get<bool>();
  }
  // sentence-transformers' Dense.load imports this class and fails without it.
  auto it = file->find("activation_function");
  if (it == file->end() || !it->is_string())
    wrong_type(name, "activation_function", "a torch.nn activation's class path");
  const std::string activation = it->get<std::string>();
  const auto known = model::heads::activation_from_torch_class(activation);
  if (!known || *known == model::heads::Activation::kSigmoid) {
    throw Error(ErrorKind::kUnsupported,
                name + ": activation_function " + activation +
                    " is not supported (onepass runs torch.nn.modules.activation.Tanh and "
                    "torch.nn.modules.linear.Identity)");
  }
  dense.activation = *known;
  return dense;
}

constexpr std::string_view kModulePrefix = "sentence_transformers.models.";

// modules.json: [{"idx", "name", "path", "type"}, ...], the pipeline encode() runs in order:
// the transformer, Pooling, then Dense modules and Normalize on the pooled embedding.
void read_modules(const fs::path& dir, SentenceTransformersConfig& config,
                  std::string& pooling_path) {
  const auto modules = read_optional_json(dir, "modules.json", /*list=*/true);
  if (!modules) return;
  for (const auto& module : *modules) {
    if (!module.is_object() || !module.contains("type") || !module["type"].is_string())
      wrong_type("modules.json", "type", "a module's class name");
    const std::string type = module["type"].get<std::string>();
    const std::string_view short_type = type.starts_with(kModulePrefix)
                                            ? std::string_view(type).substr(kModulePrefix.size())
                                            : std::string_view();
    // Anything after Normalize would change a unit vector: the pipeline would no longer end in
    // one, and a Dense module would see a normalised input; neither is what onepass runs.
    if (config.normalizes && short_type != "Normalize") {
      config.unsupported_modules.push_back(type + " after Normalize");
      config.normalizes = false;
      continue;
    }
    if (short_type == "Normalize") {
      config.normalizes = true;
    } else if (short_type == "Pooling") {
      pooling_path = module_folder(module);
    } else if (short_type == "Dense") {
      config.dense.push_back(read_dense(dir, module_folder(module)));
    } else if (short_type == "Dropout" || type.ends_with(".Transformer")) {
      // The encoder itself (remote-code repos name their own Transformer class); Dropout does
      // nothing at inference.
    } else {
      config.unsupported_modules.push_back(type);
    }
  }
}

}  // namespace

SentenceTransformersConfig read_sentence_transformers_config(const fs::path& dir) {
  SentenceTransformersConfig config;
  std::string pooling_path = "1_Pooling";  // where sentence-transformers saves it
  read_modules(dir, config, pooling_path);
  read_pooling(dir, pooling_path, config);
  read_max_seq_length(dir, config);
  read_prompts(dir, config);
  return config;
}

}  // namespace onepass::runtime
