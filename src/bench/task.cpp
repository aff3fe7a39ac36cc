#include "bench/task.h"

#include <array>

#include "base/error.h"

namespace onepass::bench {
namespace {

// In Task order (task_name indexes it; the static_assert below keeps them together).
constexpr std::array<TaskRow, 7> kTasks{{
    {Task::kAuto, "auto", "", "", "what the endpoint answers"},
    {Task::kClassify, "classify", "text-classification", "classifier,reranker",
     "labels and scores (NLI pairs as text_pair)"},
    {Task::kEmbed, "embed", "feature-extraction", "embedder", "dense embeddings"},
    {Task::kTokens, "tokens", "token-classification", "token-classification",
     "NER entities, aggregation_strategy simple"},
    {Task::kSparse, "sparse", "", "fill-mask", "SPLADE vectors (a *ForMaskedLM model), tei only"},
    {Task::kQuestion, "qa", "question-answering", "question-answering",
     "each sample's text_pair asked about its text, onepass/hf only"},
    {Task::kExtract, "extract", "", "extract",
     "entities of each sample's labels (its \"labels\", else person, organization, location, "
     "date), a GLiNER model, onepass only"},
}};

constexpr bool rows_in_task_order() {
  for (std::size_t i = 0; i < kTasks.size(); ++i)
    if (static_cast<std::size_t>(kTasks[i].task) != i) return false;
  return true;
}
static_assert(rows_in_task_order(), "kTasks must list the workloads in Task order");

}  // namespace

std::span<const TaskRow> task_table() { return kTasks; }

const char* task_name(Task task) { return kTasks[static_cast<std::size_t>(task)].name.data(); }

Task parse_task(std::string_view name) {
  for (const auto& row : kTasks) {
    if (name == row.name || (!row.pipeline.empty() && name == row.pipeline)) return row.task;
  }
  std::string accepted;
  for (const auto& row : kTasks) {
    accepted += accepted.empty() ? "" : ", ";
    accepted += row.name;
  }
  throw Error(ErrorKind::kInvalidArgument, "--task '" + std::string(name) + "' is not one of " +
                                               accepted +
                                               " (or a pipeline name such as text-classification)");
}

std::string task_help() {
  std::string help;
  for (const auto& row : kTasks) {
    help += help.empty() ? "" : "; ";
    help += std::string(row.name);
    if (!row.pipeline.empty()) help += " (" + std::string(row.pipeline) + ")";
    help += ": " + std::string(row.help);
  }
  return help;
}

}  // namespace onepass::bench
