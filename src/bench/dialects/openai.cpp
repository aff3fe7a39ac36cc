// OpenAI-compatible routes. openai: POST /v1/embeddings {"input": [str], "model"} answered with
// {"data": [{"embedding", "index"}]}. vllm adds POST /classify {"model", "input": [str]} answered
// with {"data": [{"index", "label", "probs"}]}; vLLM's classify takes one string per input, so a
// pair is sent as "premise\nhypothesis".
#include <algorithm>

#include "base/error.h"
#include "bench/dialects/dialects.h"

namespace onepass::bench {
namespace {

using nlohmann::json;

class OpenAiDialect final : public Dialect {
 public:
  OpenAiDialect(std::string name, bool classify, DialectOptions options)
      : Dialect(std::move(options)), name_(std::move(name)), classify_(classify) {}

  std::string_view name() const override { return name_; }
  std::vector<Task> tasks() const override {
    if (classify_) return {Task::kClassify, Task::kEmbed};
    return {Task::kEmbed};
  }

  http::Request build(std::span<const Sample* const> batch, Task task) const override {
    json input = json::array();
    for (const Sample* sample : batch) {
      input.push_back(task == Task::kEmbed ? sample->text : detail::single_text(*sample));
    }
    json body = {{"input", std::move(input)}};
    if (!options().model.empty()) body["model"] = options().model;
    if (task == Task::kEmbed) {
      body["encoding_format"] = "float";
      return json_request("/v1/embeddings", body.dump());
    }
    if (options().pad_to_max) body["truncate_prompt_tokens"] = options().max_len;
    return json_request("/classify", body.dump());
  }

  std::vector<Answer> parse(const http::Response& response, std::size_t batch_size,
                            Task task) const override {
    const json doc = detail::parse_body(response, name_);
    if (!doc.is_object() || !doc.contains("data") || !doc["data"].is_array() ||
        doc["data"].size() != batch_size) {
      detail::bad_shape(name_, "expected {\"data\": [...]} with one item per input");
    }
    std::vector<Answer> answers(batch_size);
    std::vector<bool> seen(batch_size, false);
    for (const auto& item : doc["data"]) {
      if (!item.is_object() || !item.contains("index") || !item["index"].is_number_unsigned()) {
        detail::bad_shape(name_, "data item without an index");
      }
      const auto index = item["index"].get<std::size_t>();
      if (index >= batch_size || seen[index]) detail::bad_shape(name_, "bad or repeated index");
      seen[index] = true;
      Answer& answer = answers[index];
      if (task == Task::kEmbed) {
        if (!item.contains("embedding")) detail::bad_shape(name_, "item without an embedding");
        detail::flatten_numbers(item["embedding"], answer.values, name_);
        continue;
      }
      if (!item.contains("label") || !item["label"].is_string() || !item.contains("probs")) {
        detail::bad_shape(name_, "classification item without label and probs");
      }
      answer.label = item["label"].get<std::string>();
      detail::flatten_numbers(item["probs"], answer.values, name_);
      if (answer.values.empty()) detail::bad_shape(name_, "empty probs");
      answer.score = *std::max_element(answer.values.begin(), answer.values.end());
    }
    return answers;
  }

 private:
  std::string name_;
  bool classify_;
};

}  // namespace

std::unique_ptr<Dialect> make_vllm_dialect(DialectOptions options) {
  return std::make_unique<OpenAiDialect>("vllm", true, std::move(options));
}
std::unique_ptr<Dialect> make_openai_dialect(DialectOptions options) {
  return std::make_unique<OpenAiDialect>("openai", false, std::move(options));
}

}  // namespace onepass::bench
