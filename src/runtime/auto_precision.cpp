#include "runtime/auto_precision.h"

#include <chrono>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <utility>

#include "base/error.h"
#include "base/log.h"
#include "runtime/extract.h"
#include "runtime/precision_verdicts.h"

namespace onepass::runtime {
namespace {

using nlohmann::json;
using Clock = std::chrono::steady_clock;

[[noreturn]] void bad_line(std::size_t line, const std::string& what) {
  throw Error(ErrorKind::kInvalidInput,
              "precision check data line " + std::to_string(line) + ": " + what);
}

}  // namespace

std::vector<CheckDataText> read_check_data(const std::filesystem::path& file) {
  std::ifstream in(file);
  if (!in) {
    throw Error(ErrorKind::kNotFound,
                "precision check data " + file.filename().string() + " cannot be read");
  }
  std::vector<CheckDataText> out;
  std::string text;
  for (std::size_t line = 1; std::getline(in, text); ++line) {
    if (text.find_first_not_of(" \t\r") == std::string::npos) continue;
    json doc;
    try {
      doc = json::parse(text);
    } catch (const json::parse_error&) {
      bad_line(line, "not valid JSON");
    }
    if (!doc.is_object()) bad_line(line, "expected a JSON object");
    const auto t = doc.find("text");
    if (t == doc.end() || !t->is_string() || t->get<std::string>().empty())
      bad_line(line, "expected \"text\", a non-empty string");
    CheckDataText item{t->get<std::string>(), std::nullopt, {}};
    const auto pair = doc.find("text_pair");
    if (pair != doc.end() && !pair->is_null()) {
      if (!pair->is_string()) bad_line(line, "\"text_pair\" must be a string");
      item.pair = pair->get<std::string>();
    }
    const auto labels = doc.find("labels");
    if (labels != doc.end() && !labels->is_null()) {
      if (!labels->is_array() || labels->empty() || labels->size() > kMaxExtractLabels)
        bad_line(line, "\"labels\" must be a list of 1 to " + std::to_string(kMaxExtractLabels) +
                           " entity types");
      for (const auto& label : *labels) {
        if (!label.is_string() || label.get<std::string>().empty() ||
            label.get<std::string>().size() > kMaxLabelBytes)
          bad_line(line, "each of \"labels\" must be a non-empty string of at most " +
                             std::to_string(kMaxLabelBytes) + " bytes");
        item.labels.push_back(label.get<std::string>());
      }
    }
    out.push_back(std::move(item));
  }
  if (in.bad()) {
    throw Error(ErrorKind::kNotFound,
                "precision check data " + file.filename().string() + " cannot be read");
  }
  if (out.empty()) {
    throw Error(ErrorKind::kInvalidInput, "precision check data " + file.filename().string() +
                                              " holds no text (JSON lines: {\"text\": ...})");
  }
  return out;
}

std::vector<model::CheckExample> check_examples(const tokenizer::Tokenizer& tokenizer,
                                                const std::vector<CheckDataText>& extra) {
  const model::TextTokenizer tokenize = [&tokenizer](std::string_view text,
                                                     std::optional<std::string_view> pair) {
    tokenizer::TruncationOptions truncation;
    truncation.max_length = 128;
    tokenizer::Encoding encoding = tokenizer.encode(text, pair, truncation);
    return model::TokenizedText{std::move(encoding.ids), std::move(encoding.type_ids)};
  };
  auto examples = model::tokenize_check_texts(tokenize, model::builtin_check_texts());
  for (const auto& item : extra) {
    auto ids =
        tokenize(item.text, item.pair ? std::optional<std::string_view>(*item.pair) : std::nullopt);
    examples.push_back({std::move(ids.input_ids), std::move(ids.token_type_ids), -1, -1, {}});
  }
  return examples;
}

std::vector<model::CheckExample> gliner_check_examples(const tokenizer::Tokenizer& tokenizer,
                                                       const model::ModelInfo& info,
                                                       const std::vector<CheckDataText>& extra) {
  const SpecialTokens specials = extract_special_tokens(tokenizer, info.span);
  const std::vector<std::string> builtin_labels(std::begin(kCheckLabels), std::end(kCheckLabels));
  std::vector<model::CheckExample> out;
  std::set<std::pair<std::string_view, const std::vector<std::string>*>> seen;
  const auto add = [&](std::string_view text, const std::vector<std::string>& labels) {
    if (!seen.emplace(text, &labels).second) return;  // a premise shared by several pairs
    ExtractSequence sequence;
    try {
      sequence = build_extract_sequence(
          text, unique_labels(labels), specials, static_cast<std::size_t>(info.span.max_words),
          [&](std::string_view word) {
            return tokenizer.encode(word, std::nullopt, {}, false).ids;
          });
    } catch (const Error& e) {
      // A word this tokenizer gives no token (a script its vocabulary lacks): /extract refuses
      // such a text as well, so it is no evidence either way.
      if (e.kind() != ErrorKind::kInvalidInput) throw;
      return;
    }
    if (sequence.word_positions.empty() ||
        sequence.input_ids.size() > static_cast<std::size_t>(info.max_tokens))
      return;
    model::CheckExample example;
    example.input_ids = std::move(sequence.input_ids);
    example.word_positions = std::move(sequence.word_positions);
    out.push_back(std::move(example));
  };
  for (const auto& t : model::builtin_check_texts()) {
    add(t.text, builtin_labels);
    if (t.pair) add(t.pair, builtin_labels);
  }
  for (const auto& item : extra) {
    const auto& labels = item.labels.empty() ? builtin_labels : item.labels;
    add(item.text, labels);
    if (item.pair) add(*item.pair, labels);
  }
  return out;
}

std::vector<model::CheckExample> model_check_examples(const std::filesystem::path& dir,
                                                      const tokenizer::Tokenizer& tokenizer,
                                                      const std::vector<CheckDataText>& extra) {
  if (model::is_gliner_folder(dir))
    return gliner_check_examples(tokenizer, model::describe_model_folder(dir), extra);
  return check_examples(tokenizer, extra);
}

std::unique_ptr<model::Encoder> load_auto_precision_model(
    const model::EncoderLoader& load, const std::string& name, const std::filesystem::path& dir,
    const model::LoadOptions& load_options, const tokenizer::Tokenizer& tokenizer,
    const AutoPrecisionOptions& options, PrecisionSelection& selection) {
  const auto start = Clock::now();
  selection.mode = "auto";
  std::optional<VerdictCache> cache;
  std::optional<VerdictKey> key;
  double key_seconds = 0;  // hashing the folder's files (their digests when remembered)
  if (!options.state_dir.empty()) {
    cache.emplace(options.state_dir);
    key = cache->key(dir, options.check_data_sha256);
    key_seconds = std::chrono::duration<double>(Clock::now() - start).count();
    std::string problem;
    if (auto verdict = cache->find(*key, problem)) {
      model::LoadOptions chosen = load_options;
      chosen.precision = verdict->chosen;
      chosen.force_precision = true;  // the saved verdict is this gate's, for these weights
      auto encoder = load(chosen);
      selection.precision = kernels::precision_name(verdict->chosen);
      selection.source = "cache";
      selection.verdict = model::describe_verdict(*verdict);
      selection.choose_seconds = std::chrono::duration<double>(Clock::now() - start).count();
      log::info("precision_auto", log::Fields()
                                      .add("model", name)
                                      .add("precision", selection.precision)
                                      .add("source", selection.source)
                                      .add("verdict", selection.verdict)
                                      .add("key_s", key_seconds)
                                      .add("choose_s", selection.choose_seconds)
                                      .add("cache_file", cache->verdict_path(*key).string()));
      return encoder;
    }
    if (!problem.empty()) {
      log::warn("precision_verdict_ignored",
                log::Fields()
                    .add("model", name)
                    .add("cache_file", cache->verdict_path(*key).string())
                    .add("problem", problem));
    }
  }
  const auto examples = model_check_examples(dir, tokenizer, options.check_data);
  auto result = model::load_auto_precision(load, load_options, examples);
  selection.precision = kernels::precision_name(result.verdict.chosen);
  selection.source = "gate";
  selection.verdict = model::describe_verdict(result.verdict);
  selection.choose_seconds = std::chrono::duration<double>(Clock::now() - start).count();
  log::Fields fields;
  fields.add("model", name)
      .add("precision", selection.precision)
      .add("source", selection.source)
      .add("verdict", selection.verdict)
      .add("key_s", key_seconds)
      .add("choose_s", selection.choose_seconds);
  if (cache) {
    std::string problem;
    if (cache->store(*key, result.verdict, problem)) {
      fields.add("cache_file", cache->verdict_path(*key).string());
    } else {
      log::warn("precision_verdict_not_saved",
                log::Fields().add("model", name).add("problem", problem));
    }
  }
  log::info("precision_auto", fields);
  return std::move(result.encoder);
}

}  // namespace onepass::runtime
