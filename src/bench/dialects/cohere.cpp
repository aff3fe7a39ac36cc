// Cohere/Jina rerank: POST /v2/rerank {"model","query","documents":[str]} answered with
// {"results":[{"index","relevance_score"}]} sorted by score. A rerank request has one query, so
// every request asks the same fixed query and each sample is one document (a pair joined by a
// newline): a sample's answer is then its own score whatever batch it travels in, which is what
// the batched-vs-single verification compares. Accuracy does not apply (no label names).
#include "base/error.h"
#include "bench/dialects/dialects.h"

namespace onepass::bench {
namespace {

using nlohmann::json;

constexpr const char* kQuery = "what is this text about";
constexpr const char* kRelevance = "relevance";

class CohereDialect final : public Dialect {
 public:
  using Dialect::Dialect;

  std::string_view name() const override { return "cohere"; }
  std::vector<Task> tasks() const override { return {Task::kClassify}; }

  http::Request build(std::span<const Sample* const> batch, Task) const override {
    json documents = json::array();
    for (const Sample* sample : batch) documents.push_back(detail::single_text(*sample));
    json body = {{"query", kQuery}, {"documents", std::move(documents)}};
    if (!options().model.empty()) body["model"] = options().model;
    return json_request("/v2/rerank", body.dump());
  }

  std::vector<Answer> parse(const http::Response& response, std::size_t batch_size,
                            Task) const override {
    const json doc = detail::parse_body(response, "cohere");
    if (!doc.is_object() || !doc.contains("results") || !doc["results"].is_array() ||
        doc["results"].size() != batch_size) {
      detail::bad_shape("cohere", "expected {\"results\": [...]} with one item per document");
    }
    std::vector<Answer> answers(batch_size);
    std::vector<bool> seen(batch_size, false);
    for (const auto& item : doc["results"]) {
      if (!item.is_object() || !item.contains("index") || !item["index"].is_number_unsigned() ||
          !item.contains("relevance_score") || !item["relevance_score"].is_number()) {
        detail::bad_shape("cohere", "result without index and relevance_score");
      }
      const auto index = item["index"].get<std::size_t>();
      if (index >= batch_size || seen[index]) detail::bad_shape("cohere", "bad or repeated index");
      seen[index] = true;
      Answer& answer = answers[index];
      answer.label = kRelevance;
      answer.label_named = false;
      answer.score = item["relevance_score"].get<double>();
      answer.values = {static_cast<float>(answer.score)};
    }
    return answers;
  }
};

}  // namespace

std::unique_ptr<Dialect> make_cohere_dialect(DialectOptions options) {
  return std::make_unique<CohereDialect>(std::move(options));
}

}  // namespace onepass::bench
