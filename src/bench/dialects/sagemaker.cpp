// SageMaker / Hugging Face inference toolkit: POST /invocations {"inputs","parameters"}; the
// items of a client batch travel as one list. The route answers per the model's task, so the
// parser accepts a classifier's {"label","score"} objects and an embedder's nested floats;
// Task::kEmbed only changes the request (strings, never pairs). Task::kTokens asks a token
// classifier for aggregation_strategy "simple" and reads a list of entities per input.
// Task::kQuestion asks a question-answering model each sample's text_pair about its text and
// reads one answer per input.
#include "base/error.h"
#include "bench/dialects/dialects.h"

namespace onepass::bench {
namespace {

using nlohmann::json;

class SageMakerDialect final : public Dialect {
 public:
  SageMakerDialect(std::string name, DialectOptions options)
      : Dialect(std::move(options)), name_(std::move(name)) {}

  std::string_view name() const override { return name_; }
  // An embedder refuses premise/hypothesis objects, so auto-detection falls back to plain text;
  // a token classifier's entities are no classification or embedding answer, so it then reaches
  // tokens; a question-answering model refuses all three, so it reaches questions.
  // An extractor (onepass's /extract) refuses everything before it: /invocations asks it for
  // labels none of them sends.
  std::vector<Task> tasks() const override {
    if (name_ == "onepass")
      return {Task::kClassify, Task::kEmbed, Task::kTokens, Task::kQuestion, Task::kExtract};
    return {Task::kClassify, Task::kEmbed, Task::kTokens, Task::kQuestion};
  }

  http::Request build(std::span<const Sample* const> batch, Task task) const override {
    json inputs = json::array();
    if (task == Task::kExtract) return extract_request(batch);
    if (task == Task::kQuestion) {
      // Long contexts are cut into windows by the pipeline itself: no truncation parameter.
      for (const Sample* sample : batch) inputs.push_back(detail::question_of(*sample));
      return json_request("/invocations", json{{"inputs", std::move(inputs)}}.dump());
    }
    for (const Sample* sample : batch) {
      if (task == Task::kTokens) {
        inputs.push_back(detail::single_text(*sample));
      } else if (sample->text_pair && task != Task::kEmbed) {
        inputs.push_back({{"text", sample->text}, {"text_pair", *sample->text_pair}});
      } else {
        inputs.push_back(sample->text);
      }
    }
    // Truncation on, so a long (or --pad-to-max lengthened) input is cut to the model's limit
    // instead of being refused.
    json parameters = {{"truncation", true}};
    if (options().pad_to_max) parameters["max_length"] = options().max_len;
    if (task == Task::kTokens) parameters["aggregation_strategy"] = "simple";
    json body = {{"inputs", std::move(inputs)}, {"parameters", std::move(parameters)}};
    return json_request("/invocations", body.dump());
  }

  std::vector<Answer> parse(const http::Response& response, std::size_t batch_size,
                            Task task) const override {
    json doc = detail::parse_body(response, name_);
    if (task == Task::kExtract) {
      // A list of texts is answered with one {"entities": [...]} per text.
      if (!doc.is_array() || doc.size() != batch_size)
        detail::bad_shape(name_, "expected one {\"entities\"} object per text");
      std::vector<Answer> answers;
      for (const auto& item : doc) {
        if (!item.is_object() || !item.contains("entities"))
          detail::bad_shape(name_, "expected one {\"entities\"} object per text");
        answers.push_back(detail::answer_from_entities(item["entities"], name_));
      }
      return answers;
    }
    if (task == Task::kQuestion) {
      // The pipeline answers a list of one as its one input: a bare answer (or top_k list).
      if (batch_size == 1 && (doc.is_object() || (doc.is_array() && !doc.empty() &&
                                                  doc.front().is_object() && doc.size() != 1)))
        doc = json::array({doc});
      if (!doc.is_array() || doc.size() != batch_size)
        detail::bad_shape(name_, "expected one answer per question");
      std::vector<Answer> answers;
      for (const auto& item : doc) answers.push_back(detail::answer_from_span(item, name_));
      return answers;
    }
    if (task == Task::kTokens) {
      // A list input is answered with one list of entities per input, never unwrapped.
      if (!doc.is_array() || doc.size() != batch_size)
        detail::bad_shape(name_, "expected one list of entities per input");
      std::vector<Answer> answers;
      for (const auto& item : doc) answers.push_back(detail::answer_from_entities(item, name_));
      return answers;
    }
    // A one-item list may come back unwrapped (the toolkit does that for a single input).
    if (doc.is_object()) doc = json::array({doc});
    if (!doc.is_array() || doc.size() != batch_size) {
      detail::bad_shape(name_, "expected one answer per input");
    }
    std::vector<Answer> answers;
    answers.reserve(batch_size);
    for (const auto& item : doc) {
      if (item.is_object()) {
        answers.push_back(detail::answer_from_label_scores(json::array({item}), name_));
      } else if (item.is_array() && !item.empty() && item.front().is_object()) {
        answers.push_back(detail::answer_from_label_scores(item, name_));  // top_k list
      } else {
        Answer answer;
        detail::flatten_numbers(item, answer.values, name_);
        // No embedding is empty: an empty list is a token classifier finding no entity.
        if (answer.values.empty()) detail::bad_shape(name_, "an empty answer");
        answers.push_back(std::move(answer));
      }
    }
    return answers;
  }

 private:
  // POST /extract {"text": [...], "labels": [...]} (gliner.serve's shape, with a list of texts):
  // one label set per request, so the samples of a client batch must name the same labels.
  http::Request extract_request(std::span<const Sample* const> batch) const {
    const auto labels_of = [](const Sample* sample) -> const std::vector<std::string>& {
      return sample->labels.empty() ? default_extract_labels() : sample->labels;
    };
    json texts = json::array();
    for (const Sample* sample : batch) {
      if (labels_of(sample) != labels_of(batch.front()))
        throw Error(ErrorKind::kInvalidArgument,
                    "--task extract sends one label set per request: the samples of a batch "
                    "(--batch-size) must name the same \"labels\"");
      texts.push_back(detail::single_text(*sample));
    }
    json body = {{"text", std::move(texts)}, {"labels", labels_of(batch.front())}};
    return json_request("/extract", body.dump());
  }

  std::string name_;
};

}  // namespace

std::unique_ptr<Dialect> make_sagemaker_dialect(std::string_view name, DialectOptions options) {
  return std::make_unique<SageMakerDialect>(std::string(name), std::move(options));
}

}  // namespace onepass::bench
