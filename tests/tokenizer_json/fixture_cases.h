// Reads the fixture cases (tokenizer_cases.json, golden.json) into plain structs for the
// tokenizer.json tests and benchmarks.
#pragma once

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "tokenizer/tokenizer.h"

namespace onepass::tokenizer::testing {

struct Case {
  std::string id;
  std::string text;
  std::optional<std::string> pair;
  TruncationOptions truncation;
  std::vector<std::int32_t> ids;
  std::optional<std::vector<std::int32_t>> type_ids;
  std::optional<std::vector<std::pair<std::uint32_t, std::uint32_t>>> offsets;
  std::optional<std::vector<std::int32_t>> word_ids;  // null in the file (no word) reads as -1
};

inline std::filesystem::path fixtures_dir() {
  return std::filesystem::path(ONEPASS_TEST_DATA_DIR) / "fixtures";
}

// Folders under fixtures/models and fixtures/tokenizers that hold a tokenizer.json.
inline std::vector<std::filesystem::path> tokenizer_json_folders() {
  std::vector<std::filesystem::path> out;
  for (const char* group : {"models", "tokenizers"}) {
    const auto dir = fixtures_dir() / group;
    if (!std::filesystem::is_directory(dir)) continue;
    for (const auto& entry : std::filesystem::directory_iterator(dir))
      if (std::filesystem::exists(entry.path() / "tokenizer.json")) out.push_back(entry.path());
  }
  std::sort(out.begin(), out.end());
  return out;
}

inline nlohmann::json read_json(const std::filesystem::path& file) {
  std::ifstream in(file);
  return nlohmann::json::parse(in);
}

inline TruncationStrategy parse_strategy(const std::string& s) {
  if (s == "only_first") return TruncationStrategy::kOnlyFirst;
  if (s == "only_second") return TruncationStrategy::kOnlySecond;
  return TruncationStrategy::kLongestFirst;
}

// `golden` selects golden.json semantics: fast_input_ids where present, else input_ids.
inline std::vector<Case> read_cases(const std::filesystem::path& file, bool golden) {
  std::vector<Case> out;
  if (!std::filesystem::exists(file)) return out;
  const auto root = read_json(file);
  for (const auto& c : root.at("cases")) {
    Case k;
    k.id = c.at("id").is_string() ? c.at("id").get<std::string>() : c.at("id").dump();
    if (c.contains("question")) {
      // A question-answering window: the (question, context) pair when the context fits in
      // one; the windows of a longer one are the QA pipeline tests'.
      if (c.at("windows").get<int>() != 1) continue;
      k.text = c.at("question").get<std::string>();
      k.pair = c.at("context").get<std::string>();
    } else if (c.contains("pair")) {
      k.text = c.at("pair")[0].get<std::string>();
      k.pair = c.at("pair")[1].get<std::string>();
    } else {
      // A sentence-transformers prompt is joined before the text (golden.json says so).
      k.text = c.value("prompt", std::string()) + c.at("text").get<std::string>();
    }
    if (c.contains("max_length")) {
      k.truncation.max_length = c.at("max_length").get<std::size_t>();
      k.truncation.strategy = parse_strategy(c.value("truncation", std::string("longest_first")));
    }
    const bool fast = golden && c.contains("fast_input_ids");
    k.ids = c.at(fast ? "fast_input_ids" : "input_ids").get<std::vector<std::int32_t>>();
    const char* type_field =
        fast && c.contains("fast_token_type_ids") ? "fast_token_type_ids" : "token_type_ids";
    if (c.contains(type_field)) k.type_ids = c.at(type_field).get<std::vector<std::int32_t>>();
    if (c.contains("offsets")) {
      std::vector<std::pair<std::uint32_t, std::uint32_t>> offsets;
      for (const auto& o : c.at("offsets"))
        offsets.emplace_back(o[0].get<std::uint32_t>(), o[1].get<std::uint32_t>());
      k.offsets = std::move(offsets);
    }
    if (c.contains("word_ids")) {
      std::vector<std::int32_t> words;
      for (const auto& w : c.at("word_ids"))
        words.push_back(w.is_null() ? -1 : w.get<std::int32_t>());
      k.word_ids = std::move(words);
    }
    out.push_back(std::move(k));
  }
  return out;
}

}  // namespace onepass::tokenizer::testing
