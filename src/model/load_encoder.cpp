// load_encoder: reads config.json, picks the architecture, opens the weights.
#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

#include "base/error.h"
#include "model/architectures/architectures.h"
#include "model/architectures/deberta_v2.h"
#include "model/encoder.h"
#include "model/precision_check.h"

namespace onepass::model {
namespace {

using Loader = std::unique_ptr<Encoder> (*)(const weights::ModelConfig&, weights::WeightStore,
                                            const LoadOptions&);

struct ArchitectureEntry {
  const char* name;
  Loader loader;  // null: recognised, not available yet
};

// DeBERTa-v2 / v3: architectures/deberta_v2*.cpp.
constexpr Loader kDebertaV2Loader = &load_deberta_v2;

const std::vector<ArchitectureEntry>& architectures() {
  static const std::vector<ArchitectureEntry> table{
      {"BertModel", &load_bert},
      {"BertForSequenceClassification", &load_bert},
      {"BertForTokenClassification", &load_bert},
      {"RobertaModel", &load_bert},
      {"RobertaForSequenceClassification", &load_bert},
      {"RobertaForTokenClassification", &load_bert},
      {"XLMRobertaModel", &load_bert},
      {"XLMRobertaForSequenceClassification", &load_bert},
      {"XLMRobertaForTokenClassification", &load_bert},
      {"DebertaV2Model", kDebertaV2Loader},
      {"DebertaV2ForSequenceClassification", kDebertaV2Loader},
      {"DebertaV2ForTokenClassification", kDebertaV2Loader},
      {"DistilBertModel", &load_distilbert},
      {"DistilBertForSequenceClassification", &load_distilbert},
      {"DistilBertForTokenClassification", &load_distilbert},
      {"ElectraModel", &load_electra},
      {"ElectraForSequenceClassification", &load_electra},
      {"ElectraForTokenClassification", &load_electra},
  };
  return table;
}

std::string supported_list() {
  std::string out;
  for (const auto& name : supported_architectures()) {
    if (!out.empty()) out += ", ";
    out += name;
  }
  return out;
}

}  // namespace

const std::vector<std::string>& supported_architectures() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> out;
    for (const auto& entry : architectures()) {
      if (entry.loader != nullptr) out.emplace_back(entry.name);
    }
    return out;
  }();
  return names;
}

bool is_supported_architecture(std::string_view name) {
  const auto& names = supported_architectures();
  return std::find(names.begin(), names.end(), name) != names.end();
}

std::unique_ptr<Encoder> load_encoder(const std::filesystem::path& model_dir,
                                      const LoadOptions& options) {
  if (!std::filesystem::is_directory(model_dir)) {
    throw Error(ErrorKind::kNotFound,
                "model folder " + model_dir.filename().string() + " does not exist");
  }
  require_cpu_support(options.precision);
  const auto config = weights::load_model_config(model_dir);
  if (config.architectures.empty()) {
    throw Error(
        ErrorKind::kUnsupported,
        "config.json names no architecture (\"architectures\"); supported: " + supported_list());
  }
  const std::string& name = config.architectures.front();
  for (const auto& entry : architectures()) {
    if (name != entry.name) continue;
    if (entry.loader == nullptr) {
      throw Error(ErrorKind::kUnsupported,
                  "architecture " + name +
                      " is not available in this build yet; supported: " + supported_list());
    }
    auto encoder = entry.loader(config, weights::WeightStore::open(model_dir), options);
    enforce_precision_gate(*encoder, model_dir,
                           options);  // bf16 / int8 unless forced; see precision_check.h
    return encoder;
  }
  throw Error(ErrorKind::kUnsupported, "unsupported architecture " + name.substr(0, 80) +
                                           "; supported: " + supported_list());
}

}  // namespace onepass::model
