#include <algorithm>
#include <map>

#include "base/error.h"
#include "bench/dialects/dialects.h"

namespace onepass::bench::detail {

nlohmann::json parse_body(const http::Response& response, std::string_view dialect) {
  auto doc = nlohmann::json::parse(response.body, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded()) bad_shape(dialect, "the body is not JSON");
  return doc;
}

void bad_shape(std::string_view dialect, std::string_view what) {
  throw Error(ErrorKind::kInvalidInput,
              std::string(dialect) + " answer has an unexpected shape: " + std::string(what));
}

void flatten_numbers(const nlohmann::json& value, std::vector<float>& out,
                     std::string_view dialect) {
  if (value.is_number()) {
    out.push_back(value.get<float>());
  } else if (value.is_array()) {
    for (const auto& item : value) flatten_numbers(item, out, dialect);
  } else {
    bad_shape(dialect, "expected numbers");
  }
}

Answer answer_from_label_scores(const nlohmann::json& list, std::string_view dialect) {
  if (!list.is_array() || list.empty()) bad_shape(dialect, "expected a list of label scores");
  Answer answer;
  std::map<std::string, float> by_label;
  double best = -1;
  for (const auto& item : list) {
    if (!item.is_object() || !item.contains("label") || !item["label"].is_string() ||
        !item.contains("score") || !item["score"].is_number()) {
      bad_shape(dialect, "expected {\"label\",\"score\"} objects");
    }
    const double score = item["score"].get<double>();
    const std::string label = item["label"].get<std::string>();
    by_label[label] = static_cast<float>(score);
    if (score > best) {
      best = score;
      answer.label = label;
      answer.score = score;
    }
  }
  for (const auto& [label, score] : by_label) answer.values.push_back(score);
  return answer;
}

std::string single_text(const Sample& sample) {
  return sample.text_pair ? sample.text + "\n" + *sample.text_pair : sample.text;
}

}  // namespace onepass::bench::detail
