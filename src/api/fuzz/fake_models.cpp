// The fake models' table (fake_models.h).
#include "api/fuzz/fake_models.h"

#include <stdexcept>
#include <utility>
#include <vector>

namespace onepass::api::fuzzing {
namespace {

struct FakeModel {
  std::string_view kind;
  runtime::ModelTask task;
  const char* architecture;
  model::HeadKind head;
  std::vector<std::string> id2label;  // empty: no classification head
  int entailment_index = -1;
  int contradiction_index = -1;
};

const std::vector<FakeModel>& fake_models() {
  using model::HeadKind;
  using runtime::ModelTask;
  static const std::vector<FakeModel> table = {
      {"nli",
       ModelTask::kClassifier,
       "BertForSequenceClassification",
       HeadKind::kSequenceClassification,
       {"contradiction", "entailment", "neutral"},
       1,
       0},
      {"rerank",
       ModelTask::kReranker,
       "BertForSequenceClassification",
       HeadKind::kSequenceClassification,
       {"LABEL_0"}},
      {"embed", ModelTask::kEmbedder, "BertModel", HeadKind::kBaseModel, {}},
      {"ner",
       ModelTask::kTokenClassifier,
       "BertForTokenClassification",
       HeadKind::kTokenClassification,
       {"O", "B-PER", "I-PER", "B-LOC", "I-LOC"}},
      {"splade", ModelTask::kMaskedLm, "BertForMaskedLM", HeadKind::kMaskedLm, {}},
      {"qa",
       ModelTask::kQuestionAnswerer,
       "BertForQuestionAnswering",
       HeadKind::kQuestionAnswering,
       {"LABEL_0", "LABEL_1"}},
      {"extract", ModelTask::kSpanExtractor, "GLiNER", HeadKind::kSpanExtraction, {}},
  };
  return table;
}

}  // namespace

runtime::ModelDescription describe_fake_model(std::string_view kind, std::string name,
                                              const FakeLimits& limits) {
  const FakeModel* found = nullptr;
  for (const auto& m : fake_models())
    if (m.kind == kind) found = &m;
  if (!found) throw std::invalid_argument("no fake model of kind '" + std::string(kind) + "'");
  runtime::ModelDescription d;
  d.name = std::move(name);
  d.task = found->task;
  d.state = runtime::ModelState::kReady;
  d.max_input_length = limits.max_tokens;
  d.max_input_bytes = limits.max_input_bytes;
  d.pooling = runtime::Pooling::kMean;
  d.entailment_index = found->entailment_index;
  d.contradiction_index = found->contradiction_index;
  d.info.architecture = found->architecture;
  d.info.head = found->head;
  d.info.id2label = found->id2label;
  d.info.num_labels = static_cast<int>(found->id2label.size());
  d.info.hidden_size = limits.hidden_size;
  d.info.vocab_size = limits.vocab_size;
  d.info.type_vocab_size = 2;
  d.info.max_tokens = limits.max_tokens;
  if (d.task == runtime::ModelTask::kEmbedder)
    d.prompts = {{"query", "query: "}, {"passage", "passage: "}};
  // The classifier as --precision auto serves it from a saved verdict; the others as fp32 is.
  if (kind == "nli") {
    d.precision = {"int8", "auto", "cache", "serving int8: int8 passed (104 inputs)", 0.25};
  } else {
    d.precision = {"fp32", "fp32", "", "", 0};
  }
  if (d.task == runtime::ModelTask::kSpanExtractor) {
    d.info.span.span_mode = "markerV0";
    d.info.span.max_width = 3;
    d.info.span.max_words = 64;
    d.info.span.entity_token = "<<ENT>>";
    d.info.span.separator_token = "<<SEP>>";
  }
  return d;
}

}  // namespace onepass::api::fuzzing
