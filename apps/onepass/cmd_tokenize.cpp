// `onepass tokenize --model DIR [--tokenizer FILE]`: JSON lines on stdin, one encoding per line
// on stdout. A line is {"text"} or {"text", "text_pair"} with optional "max_length" (ids
// including special tokens) and "truncation" ("longest_first", "only_first", "only_second");
// the output is {"input_ids", "token_type_ids", "attention_mask", "tokens", "offsets"}.
// Needs only the tokenizer files of the folder (no config.json, no weights). A bad line stops
// the run with one error line naming the line number (exit code 2, through main()).
#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "apps/onepass/command.h"
#include "apps/onepass/model_reference.h"
#include "base/error.h"
#include "tokenizer/tokenizer.h"

namespace onepass::app {
namespace {

using nlohmann::json;
using tokenizer::TruncationOptions;
using tokenizer::TruncationStrategy;

struct Request {
  std::string text;
  std::optional<std::string> text_pair;
  TruncationOptions truncation;
};

[[noreturn]] void bad_line(std::size_t line, const std::string& what) {
  throw Error(ErrorKind::kInvalidInput, "line " + std::to_string(line) + ": " + what);
}

// The JSON boundary: everything is checked here, the tokenizer only sees native types.
Request parse_request(const std::string& text, std::size_t line) {
  json doc;
  try {
    doc = json::parse(text);
  } catch (const json::parse_error& e) {
    bad_line(line, std::string("not valid JSON (") + e.what() + ")");
  }
  if (!doc.is_object()) bad_line(line, "expected a JSON object such as {\"text\": \"...\"}");
  Request request;
  std::optional<std::string> strategy;
  bool truncate = false;
  for (const auto& [key, value] : doc.items()) {
    if (key == "text") {
      if (!value.is_string()) bad_line(line, "\"text\" must be a string");
      request.text = value.get<std::string>();
    } else if (key == "text_pair") {
      if (value.is_null()) continue;
      if (!value.is_string()) bad_line(line, "\"text_pair\" must be a string");
      request.text_pair = value.get<std::string>();
    } else if (key == "max_length") {
      if (!value.is_number_integer() || value.get<long long>() <= 0) {
        bad_line(line, "\"max_length\" must be a positive integer");
      }
      request.truncation.max_length = value.get<std::size_t>();
    } else if (key == "truncation") {
      if (value.is_boolean()) {
        truncate = value.get<bool>();
        if (truncate) strategy = "longest_first";
      } else if (value.is_string()) {
        strategy = value.get<std::string>();
        truncate = true;
      } else {
        bad_line(line, "\"truncation\" must be longest_first, only_first or only_second");
      }
    } else {
      bad_line(line,
               "unknown field \"" + key + "\" (expected text, text_pair, max_length, truncation)");
    }
  }
  if (!doc.contains("text")) bad_line(line, "missing \"text\"");
  if (strategy) {
    if (*strategy == "longest_first") {
      request.truncation.strategy = TruncationStrategy::kLongestFirst;
    } else if (*strategy == "only_first") {
      request.truncation.strategy = TruncationStrategy::kOnlyFirst;
    } else if (*strategy == "only_second") {
      request.truncation.strategy = TruncationStrategy::kOnlySecond;
    } else {
      bad_line(line, "unknown truncation \"" + *strategy +
                         "\" (expected longest_first, only_first or only_second)");
    }
  }
  if (truncate && request.truncation.max_length == 0) {
    bad_line(line, "\"truncation\" needs \"max_length\"");
  }
  if (doc.contains("truncation") && !truncate) request.truncation.max_length = 0;
  return request;
}

json encoding_json(const tokenizer::Encoding& encoding) {
  json offsets = json::array();
  for (const auto& [start, end] : encoding.offsets) offsets.push_back({start, end});
  return json{{"input_ids", encoding.ids},
              {"token_type_ids", encoding.type_ids},
              {"attention_mask", std::vector<int>(encoding.ids.size(), 1)},
              {"tokens", encoding.tokens},
              {"offsets", std::move(offsets)}};
}

int run_tokenize(const std::string& model_dir, const std::string& tokenizer_file) {
  const auto tok = tokenizer::load_tokenizer(
      model_dir,
      tokenizer_file.empty() ? std::nullopt : std::optional<std::filesystem::path>(tokenizer_file));
  std::string line;
  std::size_t number = 0;
  while (std::getline(std::cin, line)) {
    ++number;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.find_first_not_of(" \t") == std::string::npos) continue;
    const Request request = parse_request(line, number);
    tokenizer::Encoding encoding;
    try {
      encoding = tok->encode(
          request.text,
          request.text_pair ? std::optional<std::string_view>(*request.text_pair) : std::nullopt,
          request.truncation);
    } catch (const Error& e) {
      if (e.kind() != ErrorKind::kInvalidInput) throw;
      bad_line(number, e.what());
    }
    // Token strings can hold a piece of a character only for byte-level models; replace such
    // bytes rather than fail.
    const std::string out =
        encoding_json(encoding).dump(-1, ' ', false, json::error_handler_t::replace);
    std::fwrite(out.data(), 1, out.size(), stdout);
    std::fputc('\n', stdout);
    std::fflush(stdout);
  }
  return 0;
}

CommandRegistration registration{Command{
    "tokenize", "Tokenize JSON lines from stdin with a model folder's tokenizer",
    [](CLI::App& sub) -> std::function<int()> {
      auto model_dir = std::make_shared<std::string>();
      auto tokenizer_file = std::make_shared<std::string>();
      sub.add_option(
             "--model", *model_dir,
             "model folder or Hub id org/name[@revision] (only its tokenizer files are read)")
          ->required();
      sub.add_option("--tokenizer", *tokenizer_file,
                     "Tokenizer file to use: tokenizer.json, a SentencePiece .model or vocab.txt "
                     "(a bare name is looked up in the model folder)");
      return [model_dir, tokenizer_file] {
        return run_tokenize(resolve_model_reference(*model_dir).string(), *tokenizer_file);
      };
    }}};

}  // namespace
}  // namespace onepass::app
