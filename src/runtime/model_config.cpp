#include "runtime/model_config.h"

#include <algorithm>
#include <cctype>
#include <limits>

#include "base/error.h"
#include "runtime/prompts.h"
#include "runtime/sentence_transformers.h"

namespace onepass::runtime {

namespace fs = std::filesystem;

ModelTask task_of(const model::ModelInfo& info) {
  if (info.head == model::HeadKind::kBaseModel) return ModelTask::kEmbedder;
  if (info.head == model::HeadKind::kTokenClassification) return ModelTask::kTokenClassifier;
  if (info.head == model::HeadKind::kMaskedLm) return ModelTask::kMaskedLm;
  if (info.head == model::HeadKind::kQuestionAnswering) return ModelTask::kQuestionAnswerer;
  if (info.head == model::HeadKind::kSpanExtraction) return ModelTask::kSpanExtractor;
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

namespace {

// config.json's CrossEncoder activation, by torch.nn class path; another is refused naming it
// (its scores would be other than the library's).
model::heads::Activation cross_encoder_activation(const std::string& name) {
  if (name.empty()) return model::heads::Activation::kSigmoid;
  if (const auto known = model::heads::activation_from_torch_class(name)) return *known;
  throw Error(ErrorKind::kUnsupported,
              "config.json: the sentence-transformers CrossEncoder activation " + name +
                  " is not supported (Sigmoid, Identity and Tanh are)");
}

}  // namespace

void derive_description(ModelDescription& description, std::size_t max_input_length) {
  description.task = task_of(description.info);
  if (description.task == ModelTask::kReranker) {
    description.cross_encoder_activation =
        cross_encoder_activation(description.info.cross_encoder_activation);
  }
  description.entailment_index = find_label(description.info, "entail");
  description.contradiction_index = find_label(description.info, "contra");
  std::size_t limit = static_cast<std::size_t>(description.info.max_tokens);
  if (description.max_seq_length > 0)
    limit = std::min(limit, static_cast<std::size_t>(description.max_seq_length));
  if (max_input_length != 0) limit = std::min(limit, max_input_length);
  description.max_input_length = static_cast<int>(limit);
}

namespace {

bool is_embedder(ModelTask task) {
  return task == ModelTask::kEmbedder || task == ModelTask::kMaskedLm;
}

// The default prompt: the server's flag, else the folder's own default_prompt_name.
void choose_default_prompt(ModelDescription& description, const std::optional<std::string>& name,
                           const FolderOptions& options) {
  if (options.default_prompt) {
    description.default_prompt = options.default_prompt;
    return;
  }
  const std::optional<std::string>& chosen =
      options.default_prompt_name ? options.default_prompt_name : name;
  if (!chosen) return;
  auto it = description.prompts.find(*chosen);
  if (it == description.prompts.end()) {
    std::string message = "--default-prompt-name '" + *chosen +
                          "' is not one of the prompts of model '" + description.name +
                          "' (config_sentence_transformers.json):";
    message.append(description.prompts.empty() ? " it has none" : quoted_prompt_names(description));
    throw Error(ErrorKind::kInvalidArgument, message);
  }
  description.default_prompt = it->second;
  description.default_prompt_name = *chosen;
}

// What modules.json runs on a base model's pooled embedding: Dense modules (each fed the previous
// width) and Normalize. A module onepass does not run fails the model, never a silently
// different embedding.
void apply_modules(ModelDescription& description, const SentenceTransformersConfig& st) {
  if (!st.unsupported_modules.empty()) {
    throw Error(ErrorKind::kUnsupported,
                "modules.json: the sentence-transformers module " + st.unsupported_modules.front() +
                    " is not supported (onepass runs Transformer, Pooling, Dense and Normalize); "
                    "its embeddings would differ from sentence-transformers'");
  }
  int width = description.info.hidden_size;
  for (const auto& dense : st.dense) {
    if (dense.in_features != width) {
      throw Error(ErrorKind::kInvalidModel, dense.path + "/config.json: in_features " +
                                                std::to_string(dense.in_features) +
                                                " differs from the " + std::to_string(width) +
                                                " values of the embedding it is given");
    }
    width = dense.out_features;
  }
  description.dense_modules = st.dense;
}

}  // namespace

ModelDescription describe_model_folder(const std::string& name, const fs::path& dir,
                                       const FolderOptions& options) {
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
  description.info = model::describe_model_folder(dir);
  const SentenceTransformersConfig st = read_sentence_transformers_config(dir);
  description.max_seq_length =
      static_cast<int>(std::min<std::size_t>(st.max_seq_length, std::numeric_limits<int>::max()));
  derive_description(description, options.max_input_length);
  if (description.task == ModelTask::kEmbedder) {
    description.pooling = options.pooling.value_or(st.pooling.value_or(Pooling::kMean));
  } else {
    description.pooling = options.pooling.value_or(Pooling::kCls);
  }
  // Prompts are what sentence-transformers' SentenceTransformer and SparseEncoder put before
  // their inputs; a classifier, reranker or token classifier takes its text as given.
  if (description.task == ModelTask::kEmbedder) apply_modules(description, st);
  if (is_embedder(description.task)) {
    description.prompts = st.prompts;
    description.pooling_includes_prompt = st.pooling_includes_prompt;
    description.normalizes = st.normalizes;
    choose_default_prompt(description, st.default_prompt_name, options);
  }
  return description;
}

}  // namespace onepass::runtime
