#include "bench/dataset.h"

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "base/error.h"

namespace onepass::bench {

extern const char* const kDefaultDatasetJsonl;  // generated from bench/datasets at configure time

namespace {

std::size_t count_code_points(std::string_view s) {
  std::size_t n = 0;
  for (const char c : s) n += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  return n;
}

std::size_t count_words(std::string_view s) {
  std::size_t n = 0;
  bool in_word = false;
  for (const char c : s) {
    const bool space = c == ' ' || c == '\t' || c == '\n';
    if (!space && !in_word) ++n;
    in_word = !space;
  }
  return n;
}

}  // namespace

std::vector<Sample> parse_dataset(std::string_view jsonl, std::string_view name) {
  std::vector<Sample> samples;
  std::size_t line_no = 0;
  std::size_t start = 0;
  while (start < jsonl.size()) {
    std::size_t end = jsonl.find('\n', start);
    if (end == std::string_view::npos) end = jsonl.size();
    const std::string_view line = jsonl.substr(start, end - start);
    start = end + 1;
    ++line_no;
    if (line.find_first_not_of(" \t\r") == std::string_view::npos) continue;
    const auto where = std::string(name) + " line " + std::to_string(line_no);
    const auto doc = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (!doc.is_object() || !doc.contains("text") || !doc["text"].is_string()) {
      throw Error(ErrorKind::kInvalidInput, where + ": expected an object with a string \"text\"");
    }
    Sample sample;
    sample.text = doc["text"].get<std::string>();
    if (doc.contains("text_pair") && !doc["text_pair"].is_null()) {
      if (!doc["text_pair"].is_string()) {
        throw Error(ErrorKind::kInvalidInput, where + ": \"text_pair\" must be a string");
      }
      sample.text_pair = doc["text_pair"].get<std::string>();
    }
    if (doc.contains("label") && !doc["label"].is_null()) {
      if (doc["label"].is_string()) {
        sample.label = doc["label"].get<std::string>();
      } else if (doc["label"].is_number_integer()) {
        sample.label = std::to_string(doc["label"].get<long long>());
      } else {
        throw Error(ErrorKind::kInvalidInput, where + ": \"label\" must be a string or integer");
      }
    }
    if (doc.contains("labels") && !doc["labels"].is_null()) {
      const auto& labels = doc["labels"];
      if (!labels.is_array() || labels.empty())
        throw Error(ErrorKind::kInvalidInput, where + ": \"labels\" must be a list of strings");
      for (const auto& label : labels) {
        if (!label.is_string())
          throw Error(ErrorKind::kInvalidInput, where + ": \"labels\" must be a list of strings");
        sample.labels.push_back(label.get<std::string>());
      }
    }
    samples.push_back(std::move(sample));
  }
  if (samples.empty()) throw Error(ErrorKind::kInvalidInput, std::string(name) + " has no samples");
  return samples;
}

const std::vector<std::string>& default_extract_labels() {
  static const std::vector<std::string> labels = {"person", "organization", "location", "date"};
  return labels;
}

std::vector<Sample> load_dataset(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    throw Error(ErrorKind::kNotFound, "cannot open dataset " + path.filename().string());
  }
  std::stringstream content;
  content << in.rdbuf();
  return parse_dataset(content.str(), path.filename().string());
}

std::vector<Sample> default_dataset() {
  return parse_dataset(kDefaultDatasetJsonl, "default dataset");
}

std::string lengthen_text(std::string_view text, std::size_t max_len) {
  if (text.empty()) return {};
  std::string out(text);
  while (count_words(out) < max_len || count_code_points(out) < 4 * max_len) {
    out += ' ';
    out += text;
  }
  return out;
}

Sample lengthen_sample(const Sample& sample, std::size_t max_len) {
  Sample out = sample;
  out.text = lengthen_text(sample.text, max_len);
  if (sample.text_pair) out.text_pair = lengthen_text(*sample.text_pair, max_len);
  return out;
}

}  // namespace onepass::bench
