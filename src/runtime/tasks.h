// The task table: one row per task a model folder can serve, as model/architectures.h is for
// families. A row says what the task is called (in logs, `onepass info` and the bench's results),
// the Hugging Face pipeline names (HF_TASK) it answers to, which runtime outputs it produces, and
// how a message describes a model that has it. The runtime, the dialects, `info` and the HF_TASK
// check read it; a new task is a ModelTask value and a row here (docs/architecture.md lists what
// else it touches).
#pragma once

#include <initializer_list>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/service.h"

namespace onepass::runtime {

struct TaskRow {
  ModelTask task;
  std::string_view name;           // "classifier", "embedder", ...: logs, info, results
  std::string_view kind_of_model;  // "a sequence classifier", as in "model 'x' is <this>"
  std::string_view info_line;      // how `info` and the HF_TASK check describe such a model
  std::string_view answers;        // "it answers ...": told to a request it cannot serve
  unsigned outputs;                // the runtime outputs it produces: bits_of(OutputKind...)
};

// A set of enum values as bits, for the tables' columns.
template <typename Enum>
constexpr unsigned bits_of(std::initializer_list<Enum> values) {
  unsigned bits = 0;
  for (Enum value : values) bits |= 1u << static_cast<unsigned>(value);
  return bits;
}

// Every row, in ModelTask order.
std::span<const TaskRow> task_table();
const TaskRow& task_row(ModelTask task);

// The row's name ("classifier", "reranker", "embedder", "token-classification", "fill-mask",
// "question-answering").
const char* task_name(ModelTask task);

bool task_produces(ModelTask task, OutputKind output);

// The first output the task's row produces, in OutputKind order: what `onepass run` prints for
// the task (logits, the pooled embedding, token logits, the sparse vector).
OutputKind primary_output(ModelTask task);

// "logits", "pooled embeddings", ...: what a request asked for, in messages.
const char* output_name(OutputKind output);

// What a request the model's task cannot serve is told: "model 'x' is an embedding model and
// cannot serve <what>; it answers dense embeddings".
std::string task_mismatch_message(const ModelDescription& model, std::string_view what);

// A Hugging Face pipeline name (HF_TASK, the toolkit's task names) and the models it runs on.
struct PipelineRow {
  std::string_view name;          // "text-classification", "ner", ...
  unsigned tasks;                 // bits_of(ModelTask...)
  bool needs_entailment = false;  // zero-shot: an NLI classifier with an entailment label
};

std::span<const PipelineRow> pipeline_table();

// The row named `name`, or nullptr when onepass serves no such pipeline.
const PipelineRow* find_pipeline(std::string_view name);

// Whether `model` can run `pipeline`.
bool pipeline_fits(const PipelineRow& pipeline, const ModelDescription& model);

// Whether `model` can run the pipeline called `name` (false for a name not in the table).
bool serves_pipeline(const ModelDescription& model, std::string_view name);

// The names of every pipeline `model` can run, in table order (`onepass info`).
std::vector<std::string> pipelines_of(const ModelDescription& model);

// "text-classification (an NLI model, also zero-shot-classification)": the row's info line, with
// the zero-shot note for a classifier that has an entailment label.
std::string describe_task(const ModelDescription& model);

}  // namespace onepass::runtime
