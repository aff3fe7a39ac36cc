// Text Embeddings Inference: POST /predict for classifiers (a batch is a list of lists, one
// [text] or [premise, hypothesis] per input, answered with every label's score), POST /embed for
// embedders ({"inputs": [str]} answered with [[f32]]), POST /predict_tokens for token classifiers
// (onepass's extension: {"inputs": [str], "aggregation_strategy": "simple"} answered with a list
// of entities per input; a pair travels as one text joined by a newline), POST /embed_sparse for
// SPLADE models ({"inputs": [str]} answered with [[{index, value}]] per input).
#include "base/error.h"
#include "bench/dialects/dialects.h"

namespace onepass::bench {
namespace {

using nlohmann::json;

// [{"index", "value"}, ...] as a dense vector up to the last index.
Answer sparse_answer(const json& entries) {
  if (!entries.is_array()) detail::bad_shape("tei", "expected a list of {index, value}");
  Answer answer;
  for (const auto& entry : entries) {
    const auto index = entry.is_object() ? entry.find("index") : entry.end();
    const auto value = entry.is_object() ? entry.find("value") : entry.end();
    if (index == entry.end() || value == entry.end() || !index->is_number_unsigned() ||
        !value->is_number() || index->get<std::uint64_t>() >= (1u << 24)) {
      detail::bad_shape("tei", "expected {index, value} with an index under 2^24");
    }
    const auto i = index->get<std::size_t>();
    if (i >= answer.values.size()) answer.values.resize(i + 1, 0.0f);
    answer.values[i] = value->get<float>();
  }
  return answer;
}

class TeiDialect final : public Dialect {
 public:
  using Dialect::Dialect;

  std::string_view name() const override { return "tei"; }
  // A token classifier refuses /predict and /embed (422), so auto-detection reaches tokens; a
  // SPLADE model refuses those three, so it reaches sparse.
  std::vector<Task> tasks() const override {
    return {Task::kClassify, Task::kEmbed, Task::kTokens, Task::kSparse};
  }

  http::Request build(std::span<const Sample* const> batch, Task task) const override {
    json inputs = json::array();
    if (task == Task::kEmbed) {
      for (const Sample* sample : batch) inputs.push_back(sample->text);
      return json_request("/embed", json{{"inputs", inputs}, {"truncate", true}}.dump());
    }
    if (task == Task::kSparse) {
      for (const Sample* sample : batch) inputs.push_back(sample->text);
      return json_request("/embed_sparse", json{{"inputs", inputs}, {"truncate", true}}.dump());
    }
    if (task == Task::kTokens) {
      for (const Sample* sample : batch) inputs.push_back(detail::single_text(*sample));
      json body = {{"inputs", inputs}, {"aggregation_strategy", "simple"}, {"truncate", true}};
      return json_request("/predict_tokens", body.dump());
    }
    // Always the list-of-lists form: a flat list of two strings would be read as ONE pair.
    for (const Sample* sample : batch) {
      json item = json::array({sample->text});
      if (sample->text_pair) item.push_back(*sample->text_pair);
      inputs.push_back(std::move(item));
    }
    json body = {{"inputs", inputs}, {"truncate", true}, {"raw_scores", false}};
    return json_request("/predict", body.dump());
  }

  std::vector<Answer> parse(const http::Response& response, std::size_t batch_size,
                            Task task) const override {
    json doc = detail::parse_body(response, "tei");
    if (!doc.is_array()) detail::bad_shape("tei", "expected a list");
    // A single input may be answered without the outer list.
    if (task == Task::kClassify && batch_size == 1 && !doc.empty() && doc.front().is_object()) {
      doc = json::array({doc});
    }
    if (doc.size() != batch_size) detail::bad_shape("tei", "expected one answer per input");
    std::vector<Answer> answers;
    answers.reserve(batch_size);
    for (const auto& item : doc) {
      if (task == Task::kSparse) {
        answers.push_back(sparse_answer(item));
      } else if (task == Task::kTokens) {
        answers.push_back(detail::answer_from_entities(item, "tei"));
      } else if (task == Task::kClassify) {
        answers.push_back(detail::answer_from_label_scores(item, "tei"));
      } else {
        Answer answer;
        detail::flatten_numbers(item, answer.values, "tei");
        answers.push_back(std::move(answer));
      }
    }
    return answers;
  }
};

}  // namespace

std::unique_ptr<Dialect> make_tei_dialect(DialectOptions options) {
  return std::make_unique<TeiDialect>(std::move(options));
}

}  // namespace onepass::bench
