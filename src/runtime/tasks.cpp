#include "runtime/tasks.h"

#include <algorithm>
#include <array>
#include <bit>

#include "base/error.h"

namespace onepass::runtime {
namespace {

// In ModelTask order (task_row indexes it; the static_assert below keeps them together).
constexpr std::array<TaskRow, 7> kTasks{{
    {ModelTask::kClassifier, "classifier", "a sequence classifier", "text-classification",
     "it answers classification (and zero-shot classification when it is an NLI model)",
     bits_of({OutputKind::kLogits})},
    {ModelTask::kReranker, "reranker", "a re-ranker (a one-label cross-encoder)",
     "sentence-ranking (a one-label cross-encoder)", "it answers classification and re-ranking",
     bits_of({OutputKind::kLogits})},
    {ModelTask::kEmbedder, "embedder", "an embedding model",
     "feature-extraction (a base model: embeddings)", "it answers dense embeddings",
     bits_of({OutputKind::kPooled, OutputKind::kTokens})},
    {ModelTask::kTokenClassifier, "token-classification", "a token classifier",
     "token-classification (a *ForTokenClassification model: entities)",
     "it answers token classification (/predict_tokens, /invocations)",
     bits_of({OutputKind::kTokenLogits})},
    {ModelTask::kMaskedLm, "fill-mask",
     "a sparse embedding model (a *ForMaskedLM checkpoint: SPLADE and fill-mask)",
     "fill-mask (a *ForMaskedLM model; also SPLADE sparse embeddings at TEI's /embed_sparse)",
     "it answers fill-mask and sparse (SPLADE) embeddings (/embed_sparse)",
     bits_of({OutputKind::kSparse, OutputKind::kFillMask})},
    {ModelTask::kQuestionAnswerer, "question-answering", "a question-answering model",
     "question-answering (a *ForQuestionAnswering model: answers from a context)",
     "it answers {\"question\", \"context\"} inputs at /invocations (the question-answering "
     "pipeline)",
     bits_of({OutputKind::kTokenLogits})},
    {ModelTask::kSpanExtractor, "extract", "an open-label entity extractor (GLiNER)",
     "extract (a GLiNER model: entities of the labels each request names)",
     "it answers entity extraction with labels chosen per request (/extract, /invocations)",
     bits_of({OutputKind::kSpans})},
}};

constexpr bool rows_in_task_order() {
  for (std::size_t i = 0; i < kTasks.size(); ++i)
    if (static_cast<std::size_t>(kTasks[i].task) != i) return false;
  return true;
}
static_assert(rows_in_task_order(), "kTasks must list the tasks in ModelTask order");

// The pipeline names of transformers and the SageMaker toolkit's sentence-transformers tasks.
constexpr std::array<PipelineRow, 12> kPipelines{{
    {"text-classification", bits_of({ModelTask::kClassifier, ModelTask::kReranker})},
    {"sentiment-analysis", bits_of({ModelTask::kClassifier, ModelTask::kReranker})},
    {"zero-shot-classification", bits_of({ModelTask::kClassifier}), true},
    {"feature-extraction", bits_of({ModelTask::kEmbedder})},
    {"sentence-similarity", bits_of({ModelTask::kEmbedder})},
    {"sentence-embeddings", bits_of({ModelTask::kEmbedder})},
    {"sentence-ranking", bits_of({ModelTask::kReranker})},
    {"text-ranking", bits_of({ModelTask::kReranker})},
    {"token-classification", bits_of({ModelTask::kTokenClassifier})},
    {"ner", bits_of({ModelTask::kTokenClassifier})},  // transformers' alias of token-classification
    {"question-answering", bits_of({ModelTask::kQuestionAnswerer})},
    {"fill-mask", bits_of({ModelTask::kMaskedLm})},
}};

bool contains(unsigned bits, ModelTask task) { return (bits & bits_of({task})) != 0; }

}  // namespace

std::span<const TaskRow> task_table() { return kTasks; }

const TaskRow& task_row(ModelTask task) {
  const auto index = static_cast<std::size_t>(task);
  ONEPASS_CHECK(index < kTasks.size(), "a ModelTask without a row in the task table");
  return kTasks[index];
}

const char* task_name(ModelTask task) { return task_row(task).name.data(); }

bool task_produces(ModelTask task, OutputKind output) {
  return (task_row(task).outputs & bits_of({output})) != 0;
}

OutputKind primary_output(ModelTask task) {
  const unsigned outputs = task_row(task).outputs;
  ONEPASS_CHECK(outputs != 0, "every task produces an output");
  return static_cast<OutputKind>(std::countr_zero(outputs));
}

const char* output_name(OutputKind output) {
  switch (output) {
    case OutputKind::kLogits:
      return "classification (logits)";
    case OutputKind::kPooled:
      return "embeddings";
    case OutputKind::kTokens:
      return "token embeddings";
    case OutputKind::kTokenLogits:
      return "per-token logits";
    case OutputKind::kSparse:
      return "sparse embeddings";
    case OutputKind::kFillMask:
      return "fill-mask";
    case OutputKind::kSpans:
      return "entity spans";
  }
  return "this output";
}

std::string task_mismatch_message(const ModelDescription& model, std::string_view what) {
  const TaskRow& row = task_row(model.task);
  std::string message = "model '" + model.name + "' is ";
  message += row.kind_of_model;
  message += " and cannot serve ";
  message += what;
  message += "; ";
  message += row.answers;
  return message;
}

std::span<const PipelineRow> pipeline_table() { return kPipelines; }

const PipelineRow* find_pipeline(std::string_view name) {
  for (const PipelineRow& row : kPipelines)
    if (row.name == name) return &row;
  return nullptr;
}

bool pipeline_fits(const PipelineRow& pipeline, const ModelDescription& model) {
  if (!contains(pipeline.tasks, model.task)) return false;
  return !pipeline.needs_entailment || model.entailment_index >= 0;
}

bool serves_pipeline(const ModelDescription& model, std::string_view name) {
  const PipelineRow* pipeline = find_pipeline(name);
  return pipeline != nullptr && pipeline_fits(*pipeline, model);
}

std::vector<std::string> pipelines_of(const ModelDescription& model) {
  std::vector<std::string> names;
  for (const PipelineRow& row : kPipelines)
    if (pipeline_fits(row, model)) names.emplace_back(row.name);
  return names;
}

std::string describe_task(const ModelDescription& model) {
  const TaskRow& row = task_row(model.task);
  std::string line(row.info_line);
  if (model.task == ModelTask::kClassifier && serves_pipeline(model, "zero-shot-classification"))
    line += " (an NLI model, also zero-shot-classification)";
  return line;
}

}  // namespace onepass::runtime
