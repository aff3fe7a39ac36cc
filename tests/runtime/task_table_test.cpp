// The task table (runtime/tasks.h) against the fixture models: every folder is described as the
// task its golden.json names, runs the pipelines (HF_TASK values) of that task and no other, and
// a request for an output its task does not produce is told what the model is and answers.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <string>

#include "base/error.h"
#include "bench/task.h"
#include "runtime/model_config.h"
#include "runtime/tasks.h"
#include "tests/support/fixture_catalogue.h"
#include "tests/support/paths.h"

namespace onepass::runtime {
namespace {

using onepass::testing::FixtureTask;

constexpr ModelTask kAllTasks[] = {ModelTask::kClassifier,   ModelTask::kReranker,
                                   ModelTask::kEmbedder,     ModelTask::kTokenClassifier,
                                   ModelTask::kMaskedLm,     ModelTask::kQuestionAnswerer,
                                   ModelTask::kSpanExtractor};

constexpr OutputKind kAllOutputs[] = {
    OutputKind::kLogits, OutputKind::kPooled,   OutputKind::kTokens, OutputKind::kTokenLogits,
    OutputKind::kSparse, OutputKind::kFillMask, OutputKind::kSpans};

ModelTask served_task(FixtureTask task) {
  switch (task) {
    case FixtureTask::kClassifier:
      return ModelTask::kClassifier;
    case FixtureTask::kReranker:
      return ModelTask::kReranker;
    case FixtureTask::kEmbedder:
      return ModelTask::kEmbedder;
    case FixtureTask::kTokenClassifier:
      return ModelTask::kTokenClassifier;
    case FixtureTask::kQuestionAnswering:
      return ModelTask::kQuestionAnswerer;
    case FixtureTask::kExtractor:
      return ModelTask::kSpanExtractor;
    case FixtureTask::kSplade:
    case FixtureTask::kMaskedLm:
      break;
  }
  return ModelTask::kMaskedLm;
}

// The pipeline a model of each task must run, whatever else it runs; none for GLiNER, which no
// Hugging Face pipeline runs.
std::string_view main_pipeline(ModelTask task) {
  switch (task) {
    case ModelTask::kSpanExtractor:
      return {};
    case ModelTask::kClassifier:
      return "text-classification";
    case ModelTask::kReranker:
      return "sentence-ranking";
    case ModelTask::kEmbedder:
      return "feature-extraction";
    case ModelTask::kTokenClassifier:
      return "ner";
    case ModelTask::kMaskedLm:
      return "fill-mask";
    case ModelTask::kQuestionAnswerer:
      break;
  }
  return "question-answering";
}

TEST(TaskTable, EveryTaskHasOneRowWithANameAndOutputs) {
  std::set<std::string_view> names;
  for (const ModelTask task : kAllTasks) {
    const TaskRow& row = task_row(task);
    EXPECT_EQ(row.task, task);
    EXPECT_TRUE(names.insert(row.name).second) << row.name;
    EXPECT_STREQ(task_name(task), std::string(row.name).c_str());
    EXPECT_NE(row.outputs, 0u) << row.name;
    EXPECT_FALSE(row.kind_of_model.empty() || row.info_line.empty() || row.answers.empty());
  }
  EXPECT_EQ(task_table().size(), std::size(kAllTasks));
  EXPECT_EQ(std::string(task_name(ModelTask::kTokenClassifier)), "token-classification");
}

TEST(TaskTable, PipelineNamesAreUniqueAndEachRunsOnSomeTask) {
  std::set<std::string_view> names;
  for (const PipelineRow& row : pipeline_table()) {
    EXPECT_TRUE(names.insert(row.name).second) << row.name;
    EXPECT_NE(row.tasks, 0u) << row.name;
    EXPECT_EQ(find_pipeline(row.name), &row);
  }
  EXPECT_EQ(find_pipeline("text-generation"), nullptr);
  EXPECT_EQ(find_pipeline(""), nullptr);
}

TEST(TaskTable, EveryFixtureIsDescribedAsItsTaskAndRunsItsPipelinesOnly) {
  for (const auto& fixture : onepass::testing::fixture_catalogue()) {
    SCOPED_TRACE(std::string(fixture.name));
    const ModelDescription d = describe_model_folder("m", fixture.dir());
    const ModelTask expected = served_task(fixture.task);
    EXPECT_EQ(d.task, expected);
    const std::vector<std::string> pipelines = pipelines_of(d);
    if (main_pipeline(d.task).empty()) {
      EXPECT_TRUE(pipelines.empty());
    } else {
      EXPECT_NE(std::find(pipelines.begin(), pipelines.end(), main_pipeline(d.task)),
                pipelines.end());
    }
    for (const PipelineRow& row : pipeline_table()) {
      const bool listed =
          std::find(pipelines.begin(), pipelines.end(), row.name) != pipelines.end();
      EXPECT_EQ(listed, serves_pipeline(d, row.name)) << row.name;
      // A pipeline of another task never runs on this model.
      if ((row.tasks & bits_of({d.task})) == 0) {
        EXPECT_FALSE(listed) << row.name;
      }
    }
    EXPECT_EQ(serves_pipeline(d, "zero-shot-classification"),
              d.task == ModelTask::kClassifier && d.entailment_index >= 0);
    for (const OutputKind output : kAllOutputs) {
      if (task_produces(d.task, output)) continue;
      const std::string message = task_mismatch_message(d, output_name(output));
      EXPECT_NE(message.find(task_row(d.task).kind_of_model), std::string::npos) << message;
      EXPECT_NE(message.find(output_name(output)), std::string::npos) << message;
    }
  }
}

TEST(TaskTable, AClassifierWithoutAnEntailmentLabelIsNoZeroShotModel) {
  ModelDescription d =
      describe_model_folder("nli", onepass::testing::fixture_model("bert-tiny-nli"));
  ASSERT_TRUE(serves_pipeline(d, "zero-shot-classification"));
  EXPECT_NE(describe_task(d).find("zero-shot-classification"), std::string::npos);
  d.entailment_index = -1;
  EXPECT_FALSE(serves_pipeline(d, "zero-shot-classification"));
  EXPECT_TRUE(serves_pipeline(d, "text-classification"));
  EXPECT_EQ(describe_task(d), "text-classification");
}

// The bench speaks the server's vocabulary: every task the server has is driven by one of the
// bench's workloads, and a workload's pipeline name is one the server answers to, so a new task
// without a way to measure it fails here.
TEST(TaskTable, EveryServerTaskHasABenchWorkloadThatDrivesIt) {
  for (const TaskRow& row : task_table()) {
    int drivers = 0;
    for (const bench::TaskRow& workload : bench::task_table()) {
      std::string_view listed = workload.server_tasks;
      while (!listed.empty()) {
        const auto comma = listed.find(',');
        if (listed.substr(0, comma) == row.name) ++drivers;
        listed = comma == std::string_view::npos ? "" : listed.substr(comma + 1);
      }
    }
    EXPECT_EQ(drivers, 1) << row.name << " is driven by " << drivers << " bench workloads";
  }
  for (const bench::TaskRow& workload : bench::task_table()) {
    // Every server task a workload names is one the server has.
    std::string_view listed = workload.server_tasks;
    while (!listed.empty()) {
      const auto comma = listed.find(',');
      const auto name = listed.substr(0, comma);
      EXPECT_TRUE(std::any_of(task_table().begin(), task_table().end(),
                              [&](const TaskRow& row) { return row.name == name; }))
          << workload.name << " drives " << name << ", which the server does not have";
      listed = comma == std::string_view::npos ? "" : listed.substr(comma + 1);
    }
    if (workload.pipeline.empty()) continue;
    EXPECT_NE(find_pipeline(workload.pipeline), nullptr) << workload.pipeline;
    EXPECT_EQ(bench::parse_task(workload.pipeline), workload.task) << workload.pipeline;
    EXPECT_EQ(bench::parse_task(workload.name), workload.task) << workload.name;
  }
  try {
    bench::parse_task("sentence-similarity");  // the server's, but no workload's
    ADD_FAILURE() << "an unknown --task was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kInvalidArgument);
    for (const bench::TaskRow& workload : bench::task_table())
      EXPECT_NE(std::string(e.what()).find(workload.name), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace onepass::runtime
