// `--precision auto` in the runtime: the model's check set (the built-in texts and the operator's
// --precision-check-data, through the model's own tokenizer), the verdict cache
// (precision_verdicts.h) and model::load_auto_precision, with what was chosen logged
// (`precision_auto`) and reported (ModelDescription::precision).
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "model/auto_precision.h"
#include "runtime/service.h"
#include "tokenizer/tokenizer.h"

namespace onepass::runtime {

// One text of --precision-check-data.
struct CheckDataText {
  std::string text;
  std::optional<std::string> pair;
  std::vector<std::string> labels;  // GLiNER: the entity types to find (else kCheckLabels)
};

// GLiNER: the entity types its gate looks for in a text without labels of its own.
inline constexpr const char* kCheckLabels[] = {"person", "organization", "location",
                                               "date",   "animal",       "food"};

struct AutoPrecisionOptions {
  // The verdict cache's folder (precision_verdicts.h); empty: no cache, the gate runs each load.
  std::filesystem::path state_dir;
  std::vector<CheckDataText> check_data;  // added to the built-in texts
  std::string check_data_sha256;          // of the file they came from; empty without one
};

// Reads --precision-check-data: JSON lines, each {"text": "...", "text_pair": "..." (optional),
// "labels": ["...", ...] (optional, GLiNER models)};
// blank lines are skipped. Throws onepass::Error: kNotFound (the file cannot be read),
// kInvalidInput naming the line and what is wrong, or that the file holds no text.
std::vector<CheckDataText> read_check_data(const std::filesystem::path& file);

// The built-in check texts and `extra`, tokenized as served (truncated to 128 tokens).
std::vector<model::CheckExample> check_examples(const tokenizer::Tokenizer& tokenizer,
                                                const std::vector<CheckDataText>& extra);

// GLiNER's check set: each distinct text of the built-in set (a pair's two texts apart) and of
// `extra` as GLiNER's prompt with its labels (kCheckLabels unless the line names its own) and
// its words (runtime/extract.h), as /extract builds a request's; a text longer than the model's
// token limit is left out. `info` is the GLiNER model's (model::describe_model_folder).
std::vector<model::CheckExample> gliner_check_examples(const tokenizer::Tokenizer& tokenizer,
                                                       const model::ModelInfo& info,
                                                       const std::vector<CheckDataText>& extra);

// The check set of the model folder `dir`: gliner_check_examples for a GLiNER folder, else
// check_examples.
std::vector<model::CheckExample> model_check_examples(const std::filesystem::path& dir,
                                                      const tokenizer::Tokenizer& tokenizer,
                                                      const std::vector<CheckDataText>& extra);

// Loads `dir` in the fastest precision that passes the gate, reading and saving the verdict in
// options.state_dir when set; fills `selection`. `name` is the model's, for the log.
std::unique_ptr<model::Encoder> load_auto_precision_model(
    const model::EncoderLoader& load, const std::string& name, const std::filesystem::path& dir,
    const model::LoadOptions& load_options, const tokenizer::Tokenizer& tokenizer,
    const AutoPrecisionOptions& options, PrecisionSelection& selection);

}  // namespace onepass::runtime
