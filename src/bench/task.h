// The bench's workloads: what kind of request it sends and how it reads the answer. One row per
// workload, as the server's task table (runtime/tasks.h) has one per task; each row names the
// server tasks it drives, so that the bench's vocabulary and the server's stay one
// (task_table_test holds every server task to a workload that drives it). The bench is a client
// of any server, so it keeps its own table instead of linking the runtime.
#pragma once

#include <span>
#include <string>
#include <string_view>

namespace onepass::bench {

// kTokens: token classification (NER, PII), the pipeline's entities grouped with
// aggregation_strategy "simple". kSparse: SPLADE vectors (TEI's /embed_sparse). kQuestion:
// extractive question answering (the toolkit's question-answering pipeline).
// kExtract: open-label entity extraction (a GLiNER model at onepass's /extract), the labels each
// sample names.
enum class Task { kAuto, kClassify, kEmbed, kTokens, kSparse, kQuestion, kExtract };

struct TaskRow {
  Task task;
  std::string_view name;      // --task and results.json: "classify", "embed", ...
  std::string_view pipeline;  // the Hugging Face pipeline name --task also takes ("" for auto)
  // The server tasks (runtime/tasks.h's row names) this workload drives, comma-separated.
  std::string_view server_tasks;
  std::string_view help;  // what --help says of it
};

// Every row, in Task order.
std::span<const TaskRow> task_table();

const char* task_name(Task task);

// A row's name or its pipeline name ("classify" or "text-classification"); throws
// kInvalidArgument naming the accepted ones.
Task parse_task(std::string_view name);

// --task's help, from the table.
std::string task_help();

}  // namespace onepass::bench
