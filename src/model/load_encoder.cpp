// load_encoder and describe_checkpoint: config.json parsed once (weights/config.h), the
// architecture looked up in the one table (architectures/table.cpp) and its family's config read,
// the weights opened.
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/error.h"
#include "model/architectures/architectures.h"
#include "model/architectures/gliner/gliner.h"
#include "model/encoder.h"
#include "model/precision_check.h"

namespace onepass::model {
namespace {

std::string supported_list() {
  std::string out;
  for (const auto& name : supported_architectures()) {
    if (!out.empty()) out += ", ";
    out += name;
  }
  return out;
}

const Architecture& architecture_of(const weights::ModelConfig& config) {
  if (config.architectures.empty()) {
    throw Error(
        ErrorKind::kUnsupported,
        "config.json names no architecture (\"architectures\"); supported: " + supported_list());
  }
  const std::string& name = config.architectures.front();
  const Architecture* architecture = find_architecture(name);
  if (architecture == nullptr) {
    throw Error(ErrorKind::kUnsupported, "unsupported architecture " + name.substr(0, 80) +
                                             "; supported: " + supported_list());
  }
  return *architecture;
}

}  // namespace

const std::vector<std::string>& supported_architectures() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> out;
    for (const auto& entry : architecture_table()) out.emplace_back(entry.name);
    return out;
  }();
  return names;
}

bool is_supported_architecture(std::string_view name) { return find_architecture(name) != nullptr; }

namespace {

// The architecture is looked up before the sizes are read, so that a foreign config (GPT-2's) is
// named unsupported rather than misshapen by the defaults of an encoder it is not.
weights::ModelConfig read_family_config(weights::ModelConfig config) {
  architecture_of(config).family->read_config(config);
  weights::validate_encoder_sizes(config);
  return config;
}

}  // namespace

weights::ModelConfig complete_model_config(weights::ModelConfig config) {
  return read_family_config(std::move(config));
}

weights::ModelConfig parse_model_config(std::string_view json_text) {
  return read_family_config(weights::parse_pretrained_config(json_text));
}

weights::ModelConfig read_model_config(const std::filesystem::path& model_dir) {
  return read_family_config(weights::load_pretrained_config(model_dir));
}

ModelInfo describe_model_folder(const std::filesystem::path& model_dir) {
  if (is_gliner_folder(model_dir)) return describe_gliner(model_dir);
  return describe_checkpoint(read_model_config(model_dir));
}

ModelInfo describe_checkpoint(const weights::ModelConfig& config) {
  const Architecture& architecture = architecture_of(config);
  ModelInfo info;
  info.architecture = architecture.name;
  info.model_type = config.model_type;
  info.head = architecture.head;
  info.hidden_size = config.hidden_size;
  info.vocab_size = config.vocab_size;
  info.type_vocab_size = config.type_vocab_size;
  if (architecture.head != HeadKind::kBaseModel && architecture.head != HeadKind::kMaskedLm) {
    if (config.num_labels <= 0)
      throw Error(ErrorKind::kInvalidModel, "config.json: a classifier needs labels");
    // The question-answering pipeline splits qa_outputs into a start and an end logit.
    if (architecture.head == HeadKind::kQuestionAnswering && config.num_labels != 2)
      throw Error(ErrorKind::kInvalidModel, "config.json: " + architecture.name +
                                                " needs num_labels 2 (start and end "
                                                "logits), not " +
                                                std::to_string(config.num_labels));
    info.num_labels = config.num_labels;
    info.id2label = config.id2label;
    info.problem_type = config.problem_type;
    info.multi_label = config.multi_label();
    info.cross_encoder_activation = config.cross_encoder_activation;
  }
  info.max_tokens = config.max_position_embeddings;
  if (architecture.positions_after_padding) {
    if (!config.pad_token_id) {
      throw Error(ErrorKind::kInvalidModel,
                  "config.json: " + info.architecture + " needs pad_token_id");
    }
    info.max_tokens = config.max_position_embeddings - *config.pad_token_id - 1;
    if (*config.pad_token_id < 0 || info.max_tokens <= 0) {
      throw Error(ErrorKind::kInvalidModel,
                  "config.json: pad_token_id leaves no room in max_position_embeddings");
    }
  }
  return info;
}

std::unique_ptr<Encoder> load_encoder(const std::filesystem::path& model_dir,
                                      const LoadOptions& options) {
  if (!std::filesystem::is_directory(model_dir)) {
    throw Error(ErrorKind::kNotFound,
                "model folder " + model_dir.filename().string() + " does not exist");
  }
  require_cpu_support(options.precision);
  if (is_gliner_folder(model_dir)) return load_gliner(model_dir, options);
  const auto config = read_model_config(model_dir);
  const Architecture& architecture = architecture_of(config);
  auto encoder = architecture.family->load(config, weights::WeightStore::open(model_dir), options);
  enforce_precision_gate(*encoder, model_dir,
                         options);  // bf16 / int8 unless forced; see precision_check.h
  return encoder;
}

}  // namespace onepass::model
