#include "runtime/model_config.h"

#include <algorithm>
#include <cctype>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "base/error.h"

namespace onepass::runtime {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

json read_json(const fs::path& file, const std::string& what) {
  std::ifstream in(file, std::ios::binary);
  if (!in) throw Error(ErrorKind::kNotFound, what + " is missing");
  std::stringstream buffer;
  buffer << in.rdbuf();
  json parsed = json::parse(buffer.str(), nullptr, /*allow_exceptions=*/false);
  if (parsed.is_discarded() || !parsed.is_object()) {
    throw Error(ErrorKind::kInvalidModel, what + " is not a JSON object");
  }
  return parsed;
}

int int_field(const json& config, const char* key, int fallback) {
  auto it = config.find(key);
  if (it == config.end() || it->is_null()) return fallback;
  if (!it->is_number_integer()) {
    throw Error(ErrorKind::kInvalidModel,
                std::string("config.json field ") + key + " is not an integer");
  }
  return it->get<int>();
}

bool ends_with(std::string_view text, std::string_view suffix) {
  return text.size() >= suffix.size() && text.substr(text.size() - suffix.size()) == suffix;
}

// id2label is {"0": "name", ...} in config.json; absent labels fall back to LABEL_i as
// transformers' PretrainedConfig does.
std::vector<std::string> read_labels(const json& config, int num_labels) {
  std::vector<std::string> labels(static_cast<std::size_t>(num_labels));
  for (int i = 0; i < num_labels; ++i) labels[i] = "LABEL_" + std::to_string(i);
  auto it = config.find("id2label");
  if (it == config.end() || !it->is_object()) return labels;
  for (const auto& [key, value] : it->items()) {
    int index = -1;
    try {
      index = std::stoi(key);
    } catch (const std::exception&) {
      throw Error(ErrorKind::kInvalidModel, "config.json id2label has a non-numeric key");
    }
    if (index < 0 || index >= num_labels || !value.is_string()) {
      throw Error(ErrorKind::kInvalidModel, "config.json id2label does not match num_labels");
    }
    labels[index] = value.get<std::string>();
  }
  return labels;
}

model::ModelInfo read_info(const json& config) {
  model::ModelInfo info;
  auto arch = config.find("architectures");
  if (arch != config.end() && arch->is_array() && !arch->empty() && (*arch)[0].is_string()) {
    info.architecture = (*arch)[0].get<std::string>();
  }
  if (config.contains("model_type") && config["model_type"].is_string()) {
    info.model_type = config["model_type"].get<std::string>();
  }
  if (info.architecture.empty()) {
    throw Error(ErrorKind::kInvalidModel, "config.json has no architectures");
  }
  if (ends_with(info.architecture, "ForSequenceClassification")) {
    info.head = model::HeadKind::kSequenceClassification;
  } else if (ends_with(info.architecture, "ForTokenClassification")) {
    info.head = model::HeadKind::kTokenClassification;
  } else if (ends_with(info.architecture, "Model") && !ends_with(info.architecture, "HeadModel") &&
             info.architecture.find("For") == std::string::npos) {
    // A bare encoder such as BertModel; task heads (GPT2LMHeadModel, *ForMaskedLM) are not.
    info.head = model::HeadKind::kBaseModel;
  } else {
    throw Error(ErrorKind::kUnsupported, "architecture " + info.architecture +
                                             " is neither a base model nor a sequence or token "
                                             "classifier");
  }
  info.hidden_size = int_field(config, "hidden_size", 0);
  info.vocab_size = int_field(config, "vocab_size", 0);
  info.type_vocab_size = int_field(config, "type_vocab_size", 0);
  if (info.hidden_size <= 0 || info.vocab_size <= 0) {
    throw Error(ErrorKind::kInvalidModel, "config.json lacks hidden_size or vocab_size");
  }
  if (info.head != model::HeadKind::kBaseModel) {
    int labels = 2;  // transformers' default when neither num_labels nor id2label is given
    if (auto it = config.find("id2label"); it != config.end() && it->is_object()) {
      labels = static_cast<int>(it->size());
    }
    info.num_labels = int_field(config, "num_labels", labels);
    if (info.num_labels <= 0) throw Error(ErrorKind::kInvalidModel, "num_labels must be > 0");
    info.id2label = read_labels(config, info.num_labels);
    auto problem = config.find("problem_type");
    info.multi_label = problem != config.end() && problem->is_string() &&
                       problem->get<std::string>() == "multi_label_classification";
  }
  // RoBERTa-style position ids start after the padding index (HF create_position_ids_from_
  // input_ids), so pad_token_id + 1 positions are never used by real tokens.
  int positions = int_field(config, "max_position_embeddings", 512);
  if (info.model_type == "roberta" || info.model_type == "xlm-roberta" ||
      info.model_type == "camembert") {
    positions -= int_field(config, "pad_token_id", 1) + 1;
  }
  if (positions <= 2) throw Error(ErrorKind::kInvalidModel, "max_position_embeddings too small");
  info.max_tokens = positions;
  return info;
}

// sentence-transformers' 1_Pooling/config.json: pooling_mode_cls_token / pooling_mode_mean_tokens.
std::optional<Pooling> read_pooling(const fs::path& dir) {
  const fs::path file = dir / "1_Pooling" / "config.json";
  std::error_code ec;
  if (!fs::is_regular_file(file, ec)) return std::nullopt;
  const json config = read_json(file, "1_Pooling/config.json");
  auto flag = [&](const char* key) {
    auto it = config.find(key);
    return it != config.end() && it->is_boolean() && it->get<bool>();
  };
  if (flag("pooling_mode_cls_token")) return Pooling::kCls;
  if (flag("pooling_mode_mean_tokens")) return Pooling::kMean;
  throw Error(ErrorKind::kUnsupported,
              "1_Pooling/config.json asks for a pooling other than cls or mean");
}

}  // namespace

const char* task_name(ModelTask task) {
  switch (task) {
    case ModelTask::kReranker:
      return "reranker";
    case ModelTask::kEmbedder:
      return "embedder";
    case ModelTask::kTokenClassifier:
      return "token-classification";
    case ModelTask::kClassifier:
      break;
  }
  return "classifier";
}

const char* pooling_name(Pooling pooling) { return pooling == Pooling::kCls ? "cls" : "mean"; }

ModelTask task_of(const model::ModelInfo& info) {
  if (info.head == model::HeadKind::kBaseModel) return ModelTask::kEmbedder;
  if (info.head == model::HeadKind::kTokenClassification) return ModelTask::kTokenClassifier;
  return info.num_labels == 1 ? ModelTask::kReranker : ModelTask::kClassifier;
}

int find_label(const model::ModelInfo& info, std::string_view prefix) {
  for (std::size_t i = 0; i < info.id2label.size(); ++i) {
    const std::string& label = info.id2label[i];
    if (label.size() < prefix.size()) continue;
    bool match = std::equal(prefix.begin(), prefix.end(), label.begin(), [](char a, char b) {
      return std::tolower(static_cast<unsigned char>(a)) ==
             std::tolower(static_cast<unsigned char>(b));
    });
    if (match) return static_cast<int>(i);
  }
  return -1;
}

ModelDescription describe_model_folder(const std::string& name, const fs::path& dir,
                                       std::size_t max_input_length,
                                       std::optional<Pooling> pooling_override) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) {
    throw Error(ErrorKind::kNotFound,
                "model folder " + dir.filename().string() + " does not exist");
  }
  ModelDescription description;
  description.name = name;
  description.state = ModelState::kUnloaded;
  description.info = read_info(read_json(dir / "config.json", "config.json"));
  description.task = task_of(description.info);
  description.entailment_index = find_label(description.info, "entail");
  description.contradiction_index = find_label(description.info, "contra");
  if (description.task == ModelTask::kEmbedder) {
    description.pooling =
        pooling_override ? *pooling_override : read_pooling(dir).value_or(Pooling::kMean);
  } else {
    description.pooling = pooling_override.value_or(Pooling::kCls);
  }
  std::size_t limit = static_cast<std::size_t>(description.info.max_tokens);
  if (max_input_length != 0) limit = std::min(limit, max_input_length);
  description.max_input_length = static_cast<int>(limit);
  return description;
}

}  // namespace onepass::runtime
