// Reads the fixtures' golden.json and tokenizer_cases.json cases into plain structs (a
// question-answering golden's one-window cases as their (question, context) pair).
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "tokenizer/tokenizer.h"

namespace onepass::tokenizer::testing {

struct FixtureCase {
  std::string id;
  std::string text;
  std::optional<std::string> pair;
  TruncationOptions truncation;
  std::vector<std::int32_t> input_ids;
  std::optional<std::vector<std::int32_t>> token_type_ids;
  std::optional<std::vector<std::string>> tokens;
  // tokenizer_cases.json: the word ids of the folder's tokenizer.json in the tokenizers library
  // (-1 where the file has null).
  std::optional<std::vector<std::int32_t>> word_ids;
};

std::filesystem::path fixtures_dir();
// The model folders with a slow tokenizer file (a SentencePiece model or a WordPiece vocab.txt).
std::vector<std::string> model_names();
// The model folders that hold `file` (every folder has golden.json; tokenizer_cases.json is
// only in the five hand-made ones, not in the generator's: tools/fixtures/README.md).
std::vector<std::string> model_names_with(const std::string& file);
// `file` is "golden.json" or "tokenizer_cases.json" of tests/data/fixtures/models/<model>.
std::vector<FixtureCase> read_cases(const std::string& model, const std::string& file);
// The slow tokenizer's own file in the folder (its .model or vocab.txt).
std::filesystem::path slow_source(const std::string& model);

}  // namespace onepass::tokenizer::testing
