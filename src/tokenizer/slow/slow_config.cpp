#include "tokenizer/slow/slow_config.h"

#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "base/error.h"
#include "base/read_file.h"

namespace onepass::tokenizer::slow {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

[[noreturn]] void bad_file(const std::string& file, const std::string& what) {
  throw Error(ErrorKind::kInvalidModel, file + ": " + what);
}

std::optional<json> read_json(const fs::path& path) {
  const auto text = read_file_if_present(path, kSettingsFileLimitBytes);
  if (!text) return std::nullopt;
  try {
    return json::parse(*text);
  } catch (const json::exception& e) {
    bad_file(path.filename().string(), std::string("not valid JSON (") + e.what() + ")");
  }
}

std::optional<bool> optional_bool(const json& doc, const char* key, const std::string& file) {
  if (!doc.contains(key) || doc[key].is_null()) return std::nullopt;
  if (!doc[key].is_boolean()) bad_file(file, std::string("\"") + key + "\" is not a boolean");
  return doc[key].get<bool>();
}

// A serialized AddedToken's flag: absent or null is false, anything but a boolean a bad file
// (nlohmann's value() would throw its own type_error out of the loader).
bool token_flag(const json& token, const char* key, const std::string& file) {
  return optional_bool(token, key, file).value_or(false);
}

// Special tokens are written either as a plain string or as a serialized AddedToken.
struct TokenValue {
  std::string content;
  std::optional<AddedTokenSpec> flags;  // present when the file spells out the AddedToken
};

std::optional<TokenValue> token_value(const json& value, const std::string& file,
                                      const std::string& key) {
  if (value.is_null()) return std::nullopt;
  if (value.is_string()) return TokenValue{value.get<std::string>(), std::nullopt};
  if (value.is_object() && value.contains("content") && value["content"].is_string()) {
    AddedTokenSpec spec;
    spec.content = value["content"].get<std::string>();
    spec.lstrip = token_flag(value, "lstrip", file);
    spec.rstrip = token_flag(value, "rstrip", file);
    spec.single_word = token_flag(value, "single_word", file);
    spec.normalized = token_flag(value, "normalized", file);
    spec.special = true;
    return TokenValue{spec.content, spec};
  }
  bad_file(file, "\"" + key + "\" is neither a string nor an AddedToken");
}

constexpr const char* kSpecialAttributes[] = {"bos_token", "eos_token", "unk_token", "sep_token",
                                              "pad_token", "cls_token", "mask_token"};

std::optional<std::string>* attribute(SlowConfig& config, std::string_view name) {
  if (name == "bos_token") return &config.bos_token;
  if (name == "eos_token") return &config.eos_token;
  if (name == "unk_token") return &config.unk_token;
  if (name == "sep_token") return &config.sep_token;
  if (name == "pad_token") return &config.pad_token;
  if (name == "cls_token") return &config.cls_token;
  return &config.mask_token;
}

// Reads the special token attributes of one file; flags of serialized AddedTokens are kept in
// `flags` for tokens that still have to be added.
void read_special_tokens(const json& doc, const std::string& file, SlowConfig& config,
                         std::vector<AddedTokenSpec>& flags) {
  for (const char* name : kSpecialAttributes) {
    if (!doc.contains(name)) continue;
    auto value = token_value(doc[name], file, name);
    if (!value) continue;
    *attribute(config, name) = value->content;
    if (value->flags) flags.push_back(*value->flags);
  }
  if (doc.contains("additional_special_tokens") && doc["additional_special_tokens"].is_array()) {
    config.additional_special_tokens.clear();
    for (const auto& item : doc["additional_special_tokens"]) {
      auto value = token_value(item, file, "additional_special_tokens");
      if (!value) continue;
      config.additional_special_tokens.push_back(value->content);
      if (value->flags) flags.push_back(*value->flags);
    }
  }
}

}  // namespace

std::vector<std::string> SlowConfig::all_special_tokens() const {
  std::vector<std::string> out;
  auto add = [&out](const std::string& token) {
    if (std::find(out.begin(), out.end(), token) == out.end()) out.push_back(token);
  };
  for (const auto* token :
       {&bos_token, &eos_token, &unk_token, &sep_token, &pad_token, &cls_token, &mask_token}) {
    if (*token) add(**token);
  }
  for (const auto& token : additional_special_tokens) add(token);
  return out;
}

SlowConfig read_slow_config(const fs::path& model_dir) {
  SlowConfig config;
  std::vector<AddedTokenSpec> flags;
  const std::string config_file = "tokenizer_config.json";
  if (auto doc = read_json(model_dir / config_file)) {
    if (!doc->is_object()) bad_file(config_file, "not a JSON object");
    if (doc->contains("tokenizer_class") && (*doc)["tokenizer_class"].is_string()) {
      config.tokenizer_class = (*doc)["tokenizer_class"].get<std::string>();
    }
    read_special_tokens(*doc, config_file, config, flags);
    config.do_lower_case = optional_bool(*doc, "do_lower_case", config_file);
    config.strip_accents = optional_bool(*doc, "strip_accents", config_file);
    config.tokenize_chinese_chars = optional_bool(*doc, "tokenize_chinese_chars", config_file);
    config.do_basic_tokenize = optional_bool(*doc, "do_basic_tokenize", config_file);
    config.split_by_punct = optional_bool(*doc, "split_by_punct", config_file);
    config.add_prefix_space = optional_bool(*doc, "add_prefix_space", config_file);
    config.trim_offsets = optional_bool(*doc, "trim_offsets", config_file);
    config.clean_up_tokenization_spaces =
        optional_bool(*doc, "clean_up_tokenization_spaces", config_file);
    if (doc->contains("never_split") && (*doc)["never_split"].is_array()) {
      for (const auto& item : (*doc)["never_split"]) {
        if (!item.is_string()) bad_file(config_file, "\"never_split\" holds a non-string");
        config.never_split.push_back(item.get<std::string>());
      }
    }
    if (doc->contains("added_tokens_decoder")) {
      const json& decoder = (*doc)["added_tokens_decoder"];
      if (!decoder.is_object()) bad_file(config_file, "\"added_tokens_decoder\" is not an object");
      for (const auto& [key, value] : decoder.items()) {
        auto token = token_value(value, config_file, "added_tokens_decoder");
        AddedTokenSpec spec = token && token->flags ? *token->flags : AddedTokenSpec{};
        if (!token) bad_file(config_file, "added token " + key + " has no content");
        spec.content = token->content;
        spec.special = value.is_object() && token_flag(value, "special", config_file);
        try {
          std::size_t used = 0;
          spec.id = static_cast<std::int32_t>(std::stol(key, &used));
          if (used != key.size() || spec.id < 0) throw std::invalid_argument(key);
        } catch (const std::exception&) {
          bad_file(config_file, "added token id \"" + key + "\" is not a non-negative integer");
        }
        config.added_tokens.push_back(spec);
      }
    }
  }
  const std::string map_file = "special_tokens_map.json";
  if (auto doc = read_json(model_dir / map_file)) {
    if (!doc->is_object()) bad_file(map_file, "not a JSON object");
    read_special_tokens(*doc, map_file, config, flags);
  }
  const std::string added_file = "added_tokens.json";
  if (config.added_tokens.empty()) {
    if (auto doc = read_json(model_dir / added_file)) {
      if (!doc->is_object()) bad_file(added_file, "not a JSON object");
      const auto specials = config.all_special_tokens();
      for (const auto& [content, id] : doc->items()) {
        if (!id.is_number_integer() || id.get<long long>() < 0) {
          bad_file(added_file, "the id of \"" + content + "\" is not a non-negative integer");
        }
        AddedTokenSpec spec;
        spec.content = content;
        spec.id = static_cast<std::int32_t>(id.get<long long>());
        spec.special = std::find(specials.begin(), specials.end(), content) != specials.end();
        spec.normalized = !spec.special;
        config.added_tokens.push_back(spec);
      }
    }
  }
  config.special_token_flags = std::move(flags);
  return config;
}

void default_special_token(std::optional<std::string>& attribute, const char* value) {
  if (!attribute) attribute = value;
}

void finalize_added_tokens(
    SlowConfig& config, const std::function<std::optional<std::int32_t>(std::string_view)>& base_id,
    std::int32_t next_id) {
  // Special tokens that are not added tokens yet are added with the flags their file gave.
  for (const auto& token : config.all_special_tokens()) {
    const bool known = std::any_of(config.added_tokens.begin(), config.added_tokens.end(),
                                   [&](const AddedTokenSpec& t) { return t.content == token; });
    if (known || token.empty()) continue;
    AddedTokenSpec spec;
    spec.content = token;
    spec.special = true;
    for (const auto& flagged : config.special_token_flags) {
      if (flagged.content == token) spec = flagged;
    }
    config.added_tokens.push_back(spec);
  }
  for (const auto& token : config.added_tokens) next_id = std::max(next_id, token.id + 1);
  for (auto& token : config.added_tokens) {
    if (token.id >= 0) continue;
    if (auto id = base_id(token.content)) {
      token.id = *id;
    } else {
      token.id = next_id++;
    }
  }
  std::stable_sort(config.added_tokens.begin(), config.added_tokens.end(),
                   [](const AddedTokenSpec& a, const AddedTokenSpec& b) { return a.id < b.id; });
}

}  // namespace onepass::tokenizer::slow
