// `onepass run --model DIR|ORG/NAME[@REV]`: JSON lines in, one answer per line out, in order.
//   in:  {"input_ids":[...], "token_type_ids":[...]?, "id"?}  or  {"text":"...", "text_pair"?,
//   "id"?}
//   out: classifiers {"logits","probs","label"}; 1-label models {"score"} (sigmoid of the logit,
//   the raw logit for problem_type "regression"); token classifiers {"logits","labels"} per
//   token; base models {"embedding"} (--pooling, the folder's sentence-transformers Dense
//   modules, --normalize); SPLADE models {"sparse":
//   [{"index","value"}]}, the non-zero entries. "id" is copied through.
// --bench runs the input in batches of --batch-size after one warm-up batch and prints one JSON
// object of per-batch latency percentiles and throughput instead (load and tokenization are not
// timed). --idle-ms N sleeps N ms before each timed batch, as traffic with gaps leaves the
// engine idle between requests (bench/perf's idle-gap workload). --precision auto loads the
// precision serve --precision auto would (the same runtime function, verdict cache included) and
// says on stderr which and why; the --bench report's "precision" is the one that ran. This file
// is the JSON boundary: the engine sees only ids.
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "apps/onepass/command.h"
#include "apps/onepass/model_reference.h"
#include "base/error.h"
#include "hub/environment.h"
#include "model/auto_precision.h"
#include "model/batch_check.h"
#include "model/encoder.h"
#include "model/heads/dense_module.h"
#include "model/heads/postprocess.h"
#include "model/layers/cpu_pinning.h"
#include "model/precision_check.h"
#include "runtime/auto_precision.h"
#include "runtime/model_config.h"
#include "runtime/outputs.h"
#include "runtime/precision_verdicts.h"
#include "runtime/tasks.h"
#include "tokenizer/tokenizer.h"

namespace onepass::app {
namespace {

using nlohmann::json;

// --precision is read by the one parser of precision modes (model::precision_mode_from_name:
// fp32, bf16, int8 or auto); an unknown name is refused while the flags are parsed, naming the
// accepted ones.
std::string precision_flag_check(const std::string& value) {
  try {
    model::precision_mode_from_name(value);
    return {};
  } catch (const Error& e) {
    return e.what();
  }
}

struct RunOptions {
  std::string model_dir;
  std::string input = "-";
  std::string output = "-";
  int batch_size = 32;
  int threads = 0;
  bool pin_threads = true;
  std::string pooling;  // empty: the folder's 1_Pooling/config.json, else mean (as serve)
  bool normalize = false;
  bool bench = false;
  double idle_ms = 0;
  std::string precision = "fp32";
  bool force_precision = false;
  std::string state_dir;   // --precision auto: the verdicts' folder
  std::string check_data;  // --precision auto: --precision-check-data
};

struct Item {
  std::size_t line = 0;
  std::optional<std::string> id_json;  // the "id" value, already serialised
  std::vector<std::int32_t> input_ids;
  std::vector<std::int32_t> token_type_ids;
};

[[noreturn]] void bad_line(std::size_t line, const std::string& what) {
  throw Error(ErrorKind::kInvalidInput, "line " + std::to_string(line) + ": " + what);
}

std::vector<std::int32_t> int_list(const json& value, const char* key, std::size_t line) {
  if (!value.is_array()) bad_line(line, std::string("\"") + key + "\" must be a list of integers");
  std::vector<std::int32_t> out;
  out.reserve(value.size());
  for (const auto& v : value) {
    if (!v.is_number_integer())
      bad_line(line, std::string("\"") + key + "\" must be a list of integers");
    const auto n = v.get<std::int64_t>();
    if (n < INT32_MIN || n > INT32_MAX) {
      bad_line(line, std::string("\"") + key + "\" holds " + std::to_string(n) + ", out of range");
    }
    out.push_back(static_cast<std::int32_t>(n));
  }
  return out;
}

// Reads the model's tokenizer on the first text line only: id-only inputs need no tokenizer.
class LazyTokenizer {
 public:
  explicit LazyTokenizer(std::string dir) : dir_(std::move(dir)) {}
  const tokenizer::Tokenizer& get() {
    if (!tokenizer_) tokenizer_ = tokenizer::load_tokenizer(dir_);
    return *tokenizer_;
  }

 private:
  std::string dir_;
  std::unique_ptr<tokenizer::Tokenizer> tokenizer_;
};

Item parse_line(const std::string& text, std::size_t line, const model::ModelInfo& info,
                LazyTokenizer& tok) {
  const json doc = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded()) bad_line(line, "not valid JSON");
  if (!doc.is_object())
    bad_line(line, "expected a JSON object such as {\"input_ids\": [...]} or {\"text\": \"...\"}");
  Item item;
  item.line = line;
  if (const auto it = doc.find("id"); it != doc.end()) item.id_json = it->dump();
  const bool has_ids = doc.contains("input_ids");
  const bool has_text = doc.contains("text");
  if (has_ids == has_text) bad_line(line, "give exactly one of \"input_ids\" or \"text\"");
  if (has_ids) {
    item.input_ids = int_list(doc.at("input_ids"), "input_ids", line);
    if (const auto it = doc.find("token_type_ids"); it != doc.end() && !it->is_null()) {
      item.token_type_ids = int_list(*it, "token_type_ids", line);
    }
    if (doc.contains("text_pair"))
      bad_line(line, "\"text_pair\" needs \"text\", not \"input_ids\"");
  } else {
    const json& t = doc.at("text");
    if (!t.is_string()) bad_line(line, "\"text\" must be a string");
    std::optional<std::string> pair;
    if (const auto it = doc.find("text_pair"); it != doc.end() && !it->is_null()) {
      if (!it->is_string()) bad_line(line, "\"text_pair\" must be a string");
      pair = it->get<std::string>();
    }
    if (doc.contains("token_type_ids"))
      bad_line(line, "\"token_type_ids\" goes with \"input_ids\", not \"text\"");
    tokenizer::Encoding enc;
    try {
      enc = tok.get().encode(t.get_ref<const std::string&>(), pair);
    } catch (const Error& e) {
      if (e.kind() != ErrorKind::kInvalidInput)
        throw;  // a tokenizer that cannot load is not the line's fault
      bad_line(line, e.what());
    }
    item.input_ids = std::move(enc.ids);
    item.token_type_ids = std::move(enc.type_ids);
    if (item.input_ids.size() > static_cast<std::size_t>(info.max_tokens)) {
      bad_line(line, "the text has " + std::to_string(item.input_ids.size()) +
                         " tokens, more than the model's maximum of " +
                         std::to_string(info.max_tokens) + " (run does not truncate)");
    }
  }
  const model::SequenceInput seq{item.input_ids, item.token_type_ids};
  if (auto problem = model::sequence_problem(seq, info)) bad_line(line, *problem);
  return item;
}

// The values are finite: extract_output has checked them.
void append_floats(fmt::memory_buffer& out, std::span<const float> values) {
  out.push_back('[');
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (i) out.push_back(',');
    fmt::format_to(std::back_inserter(out), "{}", values[i]);
  }
  out.push_back(']');
}

// Formats each input's answer: the task the folder serves (runtime::describe_model_folder, as
// `serve` describes it) picks the output (runtime::primary_output, the task table's first) and
// the runtime's own extract_output cuts it out of the batch, pooling and Dense included, so
// `run` and the server answer from one path.
class Runner {
 public:
  Runner(const RunOptions& options, const model::Encoder& encoder,
         const runtime::ModelDescription& described, std::vector<model::heads::DenseModule> dense)
      : options_(options),
        encoder_(encoder),
        info_(encoder.info()),
        task_(described.task),
        output_(runtime::primary_output(described.task)),
        pooling_(described.pooling),
        dense_(std::move(dense)) {}

  // Runs one batch and appends its answer lines to `out`.
  void run(const std::vector<Item>& items, std::size_t begin, std::size_t end,
           fmt::memory_buffer& out) {
    forward_only(items, begin, end);
    for (std::size_t i = begin; i < end; ++i) format_item(items[i], i - begin, out);
  }
  runtime::ModelTask task() const { return task_; }
  void forward_only(const std::vector<Item>& items, std::size_t begin, std::size_t end) {
    batch_.clear();
    for (std::size_t i = begin; i < end; ++i)
      batch_.push_back({items[i].input_ids, items[i].token_type_ids});
    encoder_.forward(batch_, forward_);
  }

 private:
  void format_item(const Item& item, std::size_t index, fmt::memory_buffer& out) {
    if (!runtime::extract_output(info_, output_, pooling_, dense_, forward_, index, output_item_))
      throw Error(ErrorKind::kBackend,
                  "line " + std::to_string(item.line) + ": the model produced NaN or Inf");
    const std::vector<float>& values = output_item_.values;
    out.push_back('{');
    if (item.id_json) fmt::format_to(std::back_inserter(out), "\"id\":{},", *item.id_json);
    switch (task_) {
      case runtime::ModelTask::kClassifier: {
        probs_.resize(values.size());
        model::heads::probabilities(values, info_.multi_label, probs_);
        out.append(std::string_view("\"logits\":"));
        append_floats(out, values);
        out.append(std::string_view(",\"probs\":"));
        append_floats(out, probs_);
        out.append(std::string_view(",\"label\":"));
        out.append(json(model::heads::label_for(values, info_.id2label)).dump());
        break;
      }
      case runtime::ModelTask::kReranker: {
        // One label: its sigmoid, or the raw logit for problem_type "regression".
        probs_.resize(1);
        model::heads::probabilities(values, info_.multi_label, probs_);
        const float score = info_.problem_type == "regression" ? values[0] : probs_[0];
        fmt::format_to(std::back_inserter(out), "\"score\":{}", score);
        break;
      }
      case runtime::ModelTask::kTokenClassifier:
        // Every token's logits (special tokens included) and its arg-max label; the entity
        // grouping of the token-classification pipeline is the server's (docs/api.md).
        write_token_rows(values, out);
        break;
      case runtime::ModelTask::kQuestionAnswerer: {
        // Every token's start and end logit (special tokens included), the model's own outputs;
        // picking the answer span is the server's question-answering pipeline (docs/api.md).
        const std::size_t tokens = values.size() / 2;
        column_.resize(tokens);
        for (std::size_t t = 0; t < tokens; ++t) column_[t] = values[t * 2];
        out.append(std::string_view("\"start_logits\":"));
        append_floats(out, column_);
        for (std::size_t t = 0; t < tokens; ++t) column_[t] = values[t * 2 + 1];
        out.append(std::string_view(",\"end_logits\":"));
        append_floats(out, column_);
        break;
      }
      case runtime::ModelTask::kMaskedLm: {
        // The SPLADE vector's non-zero entries, as TEI's /embed_sparse lists them.
        out.append(std::string_view("\"sparse\":["));
        bool first = true;
        for (std::size_t v = 0; v < values.size(); ++v) {
          if (values[v] == 0.0f) continue;
          fmt::format_to(std::back_inserter(out), "{}{{\"index\":{},\"value\":{}}}",
                         first ? "" : ",", v, values[v]);
          first = false;
        }
        out.push_back(']');
        break;
      }
      case runtime::ModelTask::kSpanExtractor:  // refused before the load (run_command)
        throw Error(ErrorKind::kUnsupported, "onepass run does not run extract models");
      case runtime::ModelTask::kEmbedder:
        if (options_.normalize) model::heads::l2_normalize(output_item_.values);
        out.append(std::string_view("\"embedding\":"));
        append_floats(out, values);
        break;
    }
    out.append(std::string_view("}\n"));
  }

  void write_token_rows(const std::vector<float>& values, fmt::memory_buffer& out) {
    const auto n = static_cast<std::size_t>(info_.num_labels);
    const std::size_t tokens = values.size() / n;
    out.append(std::string_view("\"logits\":["));
    for (std::size_t t = 0; t < tokens; ++t) {
      if (t > 0) out.push_back(',');
      append_floats(out, std::span<const float>(values.data() + t * n, n));
    }
    out.append(std::string_view("],\"labels\":["));
    for (std::size_t t = 0; t < tokens; ++t) {
      if (t > 0) out.push_back(',');
      const std::span<const float> row(values.data() + t * n, n);
      out.append(json(model::heads::label_for(row, info_.id2label)).dump());
    }
    out.push_back(']');
  }

  const RunOptions& options_;
  const model::Encoder& encoder_;
  const model::ModelInfo& info_;
  runtime::ModelTask task_;
  runtime::OutputKind output_;
  runtime::Pooling pooling_;
  std::vector<model::heads::DenseModule> dense_;  // the folder's sentence-transformers modules
  std::vector<model::SequenceInput> batch_;
  model::ForwardOutput forward_;
  runtime::ItemOutput output_item_;
  std::vector<float> probs_;
  std::vector<float> column_;  // one column of a question-answering model's logits
};

double percentile(std::vector<double> sorted, double p) {
  std::sort(sorted.begin(), sorted.end());
  const auto rank =
      static_cast<std::size_t>(std::ceil(p / 100.0 * static_cast<double>(sorted.size())));
  return sorted[std::min(sorted.size() - 1, rank == 0 ? 0 : rank - 1)];
}

// `precision` is the one the encoder computes in (what auto chose, under --precision auto).
int bench(const RunOptions& options, Runner& runner, const std::vector<Item>& items,
          const std::string& precision) {
  if (items.empty())
    throw Error(ErrorKind::kInvalidArgument, "--bench needs at least one input line");
  const auto bs = static_cast<std::size_t>(options.batch_size);
  runner.forward_only(items, 0, std::min(bs, items.size()));  // warm-up: arena, primitives
  const auto idle = std::chrono::duration<double, std::milli>(options.idle_ms);
  std::vector<double> ms;
  std::size_t tokens = 0;
  double seconds = 0;  // timed batches only, without the idle gaps
  for (std::size_t b = 0; b < items.size(); b += bs) {
    const std::size_t e = std::min(items.size(), b + bs);
    for (std::size_t i = b; i < e; ++i) tokens += items[i].input_ids.size();
    if (options.idle_ms > 0) std::this_thread::sleep_for(idle);
    const auto t0 = std::chrono::steady_clock::now();
    runner.forward_only(items, b, e);
    const double batch_ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    ms.push_back(batch_ms);
    seconds += batch_ms / 1000.0;
  }
  json report{{"task", runtime::task_name(runner.task())},
              {"batch_size", options.batch_size},
              {"idle_ms", options.idle_ms},
              {"precision", precision},
              {"precision_mode", options.precision},
              {"batches", ms.size()},
              {"samples", items.size()},
              {"p50_ms", percentile(ms, 50)},
              {"p90_ms", percentile(ms, 90)},
              {"p99_ms", percentile(ms, 99)},
              {"samples_per_s", static_cast<double>(items.size()) / seconds},
              {"tokens_per_s", static_cast<double>(tokens) / seconds}};
  std::printf("%s\n", report.dump().c_str());
  return 0;
}

// --precision auto: --state-dir (else `onepass` beside the hub cache, as serve and `check
// --save-verdict` use) and --precision-check-data, read before any load.
runtime::AutoPrecisionOptions auto_precision_options(const RunOptions& options,
                                                     model::PrecisionMode mode) {
  runtime::AutoPrecisionOptions out;
  if (!mode.automatic) return out;
  out.state_dir =
      precision_state_dir(options.state_dir, hub::Environment::from_process().cache_dir);
  if (!options.check_data.empty()) {
    try {
      out.check_data = runtime::read_check_data(options.check_data);
      out.check_data_sha256 = runtime::file_sha256_hex(options.check_data);
    } catch (const Error& e) {
      throw Error(ErrorKind::kInvalidArgument, std::string("--precision-check-data: ") + e.what());
    }
  }
  return out;
}

// Loads the model as `serve --precision auto` does (runtime::load_auto_precision_model: the
// saved verdict when its key matches, else the gate, whose verdict is then saved) and says on
// stderr what was chosen and why, so that a --bench report can be read against it.
std::unique_ptr<model::Encoder> load_auto(const RunOptions& options, const model::LoadOptions& load,
                                          const runtime::AutoPrecisionOptions& auto_options,
                                          runtime::PrecisionSelection& selection) {
  // The gate tokenizes its texts as served; a folder without a usable tokenizer cannot be judged
  // on them, and `serve` would not serve it either.
  const auto tok = tokenizer::load_tokenizer(options.model_dir);
  const std::filesystem::path dir = options.model_dir;
  auto encoder = runtime::load_auto_precision_model(
      [&dir](const model::LoadOptions& o) { return model::load_encoder(dir, o); },
      dir.filename().string(), dir, load, *tok, auto_options, selection);
  std::fprintf(stderr, "precision auto: %s (%s, %.2f s): %s\n", selection.precision.c_str(),
               selection.source == "cache" ? "saved verdict" : "gate run now",
               selection.choose_seconds, selection.verdict.c_str());
  return encoder;
}

int run_command(const RunOptions& options) {
  if (options.batch_size <= 0)
    throw Error(ErrorKind::kInvalidArgument, "--batch-size must be positive");
  if (options.threads < 0)
    throw Error(ErrorKind::kInvalidArgument, "--threads must not be negative");
  if (options.idle_ms < 0 || (options.idle_ms > 0 && !options.bench))
    throw Error(ErrorKind::kInvalidArgument, "--idle-ms must be positive and needs --bench");
  if (!options.pooling.empty() && !model::heads::pooling_from_name(options.pooling)) {
    throw Error(ErrorKind::kInvalidArgument, "--pooling must be mean or cls");
  }
  std::ifstream file_in;
  if (options.input != "-") {
    file_in.open(options.input, std::ios::binary);
    if (!file_in)
      throw Error(
          ErrorKind::kNotFound,
          "cannot read the input file " + std::filesystem::path(options.input).filename().string());
  }
  std::istream& in = options.input == "-" ? std::cin : file_in;

  const model::PrecisionMode mode = model::precision_mode_from_name(options.precision);
  if (!mode.automatic && (!options.state_dir.empty() || !options.check_data.empty())) {
    throw Error(ErrorKind::kInvalidArgument,
                "--state-dir and --precision-check-data go with --precision auto");
  }
  if (mode.automatic && options.force_precision) {
    throw Error(ErrorKind::kInvalidArgument,
                "--force-precision needs one precision (bf16 or int8), not auto");
  }
  // Read before the load, so that a bad file stops the run before the gate does any work.
  const runtime::AutoPrecisionOptions auto_options = auto_precision_options(options, mode);

  // As `onepass serve` does, so that --bench times what the server runs.
  if (options.pin_threads) model::pin_forward_teams(0);
  model::LoadOptions load;
  load.threads = options.threads;
  load.precision = mode.automatic ? model::Precision::kFp32 : mode.fixed;
  load.force_precision = options.force_precision;
  std::shared_ptr<tokenizer::Tokenizer> check_tok;
  if (!mode.automatic && load.precision != model::Precision::kFp32 && !load.force_precision) {
    // The load-time accuracy gate tokenizes its built-in texts with the folder's tokenizer;
    // without a usable one it falls back to synthetic ids.
    try {
      check_tok = tokenizer::load_tokenizer(options.model_dir);
    } catch (const Error&) {
    }
    if (check_tok) {
      load.check_tokenizer = [check_tok](std::string_view text,
                                         std::optional<std::string_view> pair) {
        tokenizer::TruncationOptions truncation;
        truncation.max_length = 128;
        auto enc = check_tok->encode(text, pair, truncation);
        return model::TokenizedText{std::move(enc.ids), std::move(enc.type_ids)};
      };
    }
  }
  // The folder described as `serve` describes it (task, pooling, Dense modules) before the
  // weights load, so a folder that cannot be served fails here as it would there.
  runtime::FolderOptions folder;
  folder.pooling = model::heads::pooling_from_name(options.pooling);
  const auto described = runtime::describe_model_folder(
      std::filesystem::path(options.model_dir).filename().string(), options.model_dir, folder);
  if (described.task == runtime::ModelTask::kSpanExtractor) {
    // Its inputs are a text and the labels to find, built into one prompt per request by the
    // runtime's extract task, which run (ids in, raw outputs out) does not have.
    throw Error(ErrorKind::kInvalidArgument,
                "model " + described.name + " is " +
                    std::string(runtime::task_row(described.task).kind_of_model) +
                    "; onepass run does not run it: serve it and POST /extract");
  }
  runtime::PrecisionSelection selection;
  selection.precision = kernels::precision_name(load.precision);
  const auto encoder = mode.automatic ? load_auto(options, load, auto_options, selection)
                                      : model::load_encoder(options.model_dir, load);
  const std::string chosen_precision = selection.precision;
  const auto& info = encoder->info();
  std::vector<model::heads::DenseModule> dense;
  // An embedder's Dense modules, as the server runs them: a model with Dense modules (LaBSE,
  // ...) must not get other vectors here than from the server.
  for (const auto& module : described.dense_modules)
    dense.push_back(model::heads::DenseModule::load(options.model_dir, module));
  Runner runner(options, *encoder, described, std::move(dense));
  LazyTokenizer tok(options.model_dir);

  std::vector<Item> items;
  std::string text;
  std::size_t line = 0;
  std::FILE* out = stdout;
  if (options.output != "-" && !options.bench) {
    out = std::fopen(options.output.c_str(), "wb");
    if (!out)
      throw Error(ErrorKind::kInvalidArgument,
                  "cannot write the output file " +
                      std::filesystem::path(options.output).filename().string());
  }
  struct Closer {
    std::FILE* f;
    ~Closer() {
      if (f != stdout) std::fclose(f);
    }
  } closer{out};

  fmt::memory_buffer buffer;
  const auto flush_batch = [&] {
    buffer.clear();
    runner.run(items, 0, items.size(), buffer);
    std::fwrite(buffer.data(), 1, buffer.size(), out);
    items.clear();
  };
  while (std::getline(in, text)) {
    ++line;
    if (text.find_first_not_of(" \t\r") == std::string::npos)
      continue;  // blank lines carry nothing
    items.push_back(parse_line(text, line, info, tok));
    if (!options.bench && items.size() == static_cast<std::size_t>(options.batch_size))
      flush_batch();
  }
  if (options.bench) return bench(options, runner, items, chosen_precision);
  if (!items.empty()) flush_batch();
  std::fflush(out);
  return 0;
}

CommandRegistration registration{Command{
    "run", "Run a model folder on JSON lines (input_ids or text) and print one answer per line",
    [](CLI::App& sub) -> std::function<int()> {
      auto options = std::make_shared<RunOptions>();
      sub.add_option("--model", options->model_dir,
                     "model folder (config.json + weights) or Hub id org/name[@revision]")
          ->required();
      sub.add_option("--input", options->input, "JSON lines file, - for stdin");
      sub.add_option("--output", options->output, "output file, - for stdout");
      sub.add_option("--batch-size", options->batch_size, "sequences per forward pass");
      sub.add_option("--threads", options->threads, "compute threads (0: all cores)");
      sub.add_option("--pin-threads", options->pin_threads,
                     "pin the compute threads to cores of their own (true|false), as serve does")
          ->envname("ONEPASS_PIN_THREADS");
      sub.add_option("--pooling", options->pooling,
                     "base models: mean or cls (default: the folder's 1_Pooling, else mean)");
      sub.add_flag("--normalize", options->normalize, "base models: L2-normalise the embedding");
      sub.add_flag("--bench", options->bench,
                   "time the input in batches and print one JSON report");
      sub.add_option("--idle-ms", options->idle_ms,
                     "with --bench: sleep this long before each timed batch (traffic with gaps)");
      sub.add_option("--precision", options->precision,
                     "fp32, bf16 or int8 for the encoder's matrix products (refused if `onepass "
                     "check` fails); auto: the fastest that passes that check, as serve "
                     "--precision auto chooses (the choice and why on stderr)")
          ->check(precision_flag_check);
      sub.add_flag("--force-precision", options->force_precision,
                   "use --precision even when it fails the accuracy check for this model");
      sub.add_option("--state-dir", options->state_dir,
                     "with --precision auto: the verdicts' folder, read and written as serve does "
                     "(default: onepass beside the Hugging Face hub cache)");
      sub.add_option("--precision-check-data", options->check_data,
                     "with --precision auto: JSON lines {text, text_pair?} added to the gate's "
                     "texts");
      return [options] {
        options->model_dir = resolve_model_reference(options->model_dir).string();
        return run_command(*options);
      };
    }}};

}  // namespace
}  // namespace onepass::app
