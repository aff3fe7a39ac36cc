#include <algorithm>
#include <cmath>
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

Answer answer_from_entities(const nlohmann::json& list, std::string_view dialect) {
  if (!list.is_array()) bad_shape(dialect, "expected a list of entities per text");
  Answer answer;
  answer.label = "entities:";
  answer.label_named = false;  // entity groups say nothing about a dataset's labels
  double total = 0;
  for (const auto& item : list) {
    // The pipeline's aggregated "entity_group", its per-token "entity", GLiNER's "label".
    const char* group = !item.is_object()               ? "entity"
                        : item.contains("entity_group") ? "entity_group"
                        : item.contains("label")        ? "label"
                                                        : "entity";
    if (!item.is_object() || !item.contains(group) || !item[group].is_string() ||
        !item.contains("score") || !item["score"].is_number() || !item.contains("start") ||
        !item["start"].is_number_unsigned() || !item.contains("end") ||
        !item["end"].is_number_unsigned()) {
      bad_shape(dialect, "expected {\"entity_group\",\"score\",\"start\",\"end\"} objects");
    }
    // Appended piece by piece: g++ 12 warns (-Wrestrict, falsely) on a chain of operator+.
    answer.label.append(" ").append(item[group].get<std::string>()).append("[");
    answer.label.append(std::to_string(item["start"].get<std::size_t>())).append(",");
    answer.label.append(std::to_string(item["end"].get<std::size_t>())).append(")");
    answer.values.push_back(item["score"].get<float>());
    total += item["score"].get<double>();
  }
  if (!answer.values.empty()) answer.score = total / static_cast<double>(answer.values.size());
  return answer;
}

Answer answer_from_span(const nlohmann::json& answer, std::string_view dialect) {
  const nlohmann::json& a = answer.is_array() && !answer.empty() ? answer.front() : answer;
  if (!a.is_object() || !a.contains("score") || !a["score"].is_number() || !a.contains("start") ||
      !a["start"].is_number_unsigned() || !a.contains("end") || !a["end"].is_number_unsigned() ||
      !a.contains("answer") || !a["answer"].is_string())
    bad_shape(dialect, "expected {\"score\",\"start\",\"end\",\"answer\"} per question");
  Answer out;
  out.label = "answer[";
  out.label.append(std::to_string(a["start"].get<std::size_t>())).append(",");
  out.label.append(std::to_string(a["end"].get<std::size_t>())).append(")");
  out.label_named = false;  // a span says nothing about a dataset's labels
  out.score = a["score"].get<double>();
  return out;
}

nlohmann::json question_of(const Sample& sample) {
  return {{"question", sample.text_pair ? *sample.text_pair : std::string(kDefaultQuestion)},
          {"context", sample.text}};
}

std::vector<Answer> answers_from_rows(const std::vector<float>& data, std::size_t batch_size,
                                      bool logits, const std::vector<std::string>& label_names,
                                      std::string_view dialect) {
  if (batch_size == 0 || data.empty() || data.size() % batch_size != 0)
    bad_shape(dialect, "output size is not a multiple of the batch");
  const std::size_t width = data.size() / batch_size;
  std::vector<Answer> answers(batch_size);
  for (std::size_t i = 0; i < batch_size; ++i) {
    std::vector<float> row(data.begin() + i * width, data.begin() + (i + 1) * width);
    if (logits) {
      answers[i] = answer_from_logits(row, label_names);
    } else {
      answers[i].values = std::move(row);
    }
  }
  return answers;
}

Answer answer_from_logits(const std::vector<float>& logits,
                          const std::vector<std::string>& label_names) {
  Answer answer;
  std::vector<float> probs(logits.size());
  if (logits.empty()) return answer;
  if (logits.size() == 1) {
    probs[0] = 1.0f / (1.0f + std::exp(-logits[0]));
  } else {
    const float top = *std::max_element(logits.begin(), logits.end());
    float sum = 0;
    for (std::size_t j = 0; j < logits.size(); ++j) sum += probs[j] = std::exp(logits[j] - top);
    for (float& p : probs) p /= sum;
  }
  const std::size_t best =
      static_cast<std::size_t>(std::max_element(probs.begin(), probs.end()) - probs.begin());
  answer.label = best < label_names.size() ? label_names[best] : "LABEL_" + std::to_string(best);
  answer.label_named = best < label_names.size();
  answer.score = probs[best];
  answer.values = std::move(probs);
  return answer;
}

std::string single_text(const Sample& sample) {
  return sample.text_pair ? sample.text + "\n" + *sample.text_pair : sample.text;
}

}  // namespace onepass::bench::detail
