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
    case ModelTask::kSparseEmbedder:
      return "sparse-embedding";
    case ModelTask::kQuestionAnswerer:
      return "question-answering";
    case ModelTask::kClassifier:
      break;
  }
  return "classifier";
}

const char* pooling_name(Pooling pooling) { return pooling == Pooling::kCls ? "cls" : "mean"; }

ModelTask task_of(const model::ModelInfo& info) {
  if (info.head == model::HeadKind::kBaseModel) return ModelTask::kEmbedder;
  if (info.head == model::HeadKind::kTokenClassification) return ModelTask::kTokenClassifier;
  if (info.head == model::HeadKind::kMaskedLm) return ModelTask::kSparseEmbedder;
  if (info.head == model::HeadKind::kQuestionAnswering) return ModelTask::kQuestionAnswerer;
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

void derive_description(ModelDescription& description, std::size_t max_input_length) {
  description.task = task_of(description.info);
  description.entailment_index = find_label(description.info, "entail");
  description.contradiction_index = find_label(description.info, "contra");
  std::size_t limit = static_cast<std::size_t>(description.info.max_tokens);
  if (max_input_length != 0) limit = std::min(limit, max_input_length);
  description.max_input_length = static_cast<int>(limit);
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
  // The loader's own config reader and architecture table: what is described here is what
  // load_encoder will report once the weights are loaded.
  description.info = model::describe_checkpoint(model::read_model_config(dir));
  derive_description(description, max_input_length);
  if (description.task == ModelTask::kEmbedder) {
    description.pooling =
        pooling_override ? *pooling_override : read_pooling(dir).value_or(Pooling::kMean);
  } else {
    description.pooling = pooling_override.value_or(Pooling::kCls);
  }
  return description;
}

}  // namespace onepass::runtime
