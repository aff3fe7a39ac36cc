#include "apps/onepass/hf_task.h"

#include <string>

#include "base/error.h"

namespace onepass::app {
namespace {

using runtime::ModelTask;

const char* task_name(const runtime::ModelDescription& model) {
  switch (model.task) {
    case ModelTask::kClassifier:
      return model.entailment_index >= 0 ? "text-classification (an NLI model, also "
                                           "zero-shot-classification)"
                                         : "text-classification";
    case ModelTask::kReranker:
      return "sentence-ranking (a one-label cross-encoder)";
    case ModelTask::kEmbedder:
      return "feature-extraction (a base model: embeddings)";
    case ModelTask::kTokenClassifier:
      return "token-classification (a *ForTokenClassification model: entities)";
    case ModelTask::kMaskedLm:
      return "fill-mask (a *ForMaskedLM model; also SPLADE sparse embeddings at TEI's "
             "/embed_sparse)";
    case ModelTask::kQuestionAnswerer:
      return "question-answering (a *ForQuestionAnswering model: answers from a context)";
  }
  return "unknown";
}

}  // namespace

void check_hf_task(std::string_view hf_task, const runtime::ModelDescription& model) {
  bool fits = false;
  // The pipeline names of transformers and the SageMaker toolkit's sentence-transformers tasks.
  if (hf_task == "text-classification" || hf_task == "sentiment-analysis") {
    fits = model.task == ModelTask::kClassifier || model.task == ModelTask::kReranker;
  } else if (hf_task == "zero-shot-classification") {
    fits = model.task == ModelTask::kClassifier && model.entailment_index >= 0;
  } else if (hf_task == "feature-extraction" || hf_task == "sentence-similarity" ||
             hf_task == "sentence-embeddings") {
    fits = model.task == ModelTask::kEmbedder;
  } else if (hf_task == "sentence-ranking" || hf_task == "text-ranking") {
    fits = model.task == ModelTask::kReranker;
  } else if (hf_task == "token-classification" || hf_task == "ner") {
    // "ner" is transformers' alias of the token-classification pipeline.
    fits = model.task == ModelTask::kTokenClassifier;
  } else if (hf_task == "question-answering") {
    fits = model.task == ModelTask::kQuestionAnswerer;
  } else if (hf_task == "fill-mask") {
    fits = model.task == ModelTask::kMaskedLm;
  } else {
    throw Error(ErrorKind::kInvalidArgument,
                "HF_TASK '" + std::string(hf_task) +
                    "' is not served by onepass (it serves text-classification, "
                    "zero-shot-classification, feature-extraction, sentence-similarity, "
                    "sentence-embeddings, sentence-ranking, token-classification, "
                    "question-answering, fill-mask)");
  }
  if (!fits) {
    throw Error(ErrorKind::kInvalidArgument, "HF_TASK is '" + std::string(hf_task) +
                                                 "' but model '" + model.name + "' serves " +
                                                 task_name(model));
  }
}

}  // namespace onepass::app
