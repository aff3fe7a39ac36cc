// `onepass check --model DIR --precision auto [--save-verdict]`: what `serve --precision auto`
// would choose, the same gate on the same inputs, saved where serve reads it.
//
// `onepass check --model DIR --precision bf16|int8 [--dataset FILE]`: runs the model in fp32 and
// in the reduced precision on the same inputs and prints one JSON report (label agreement, each
// class's predicted share in both, logit differences, cosine, NaN/Inf count, accuracy on a
// labelled set) with docs/reliability.md's verdict. Exit status 0 when the precision passes, 1 when
// it fails, 2 for bad options or files.
//
// Inputs: the built-in multilingual set (model/precision_check.h) through the folder's tokenizer,
// synthetic token ids when the folder has none, or --dataset: JSON lines, each
// {"text": ..., "text_pair": ... (optional), "label": class id or name (optional)} or
// {"input_ids": [...], "token_type_ids": [...] (optional), "label": ...}.
#include <chrono>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "apps/onepass/command.h"
#include "apps/onepass/model_reference.h"
#include "base/error.h"
#include "hub/environment.h"
#include "hub/resolve.h"
#include "model/auto_precision.h"
#include "model/encoder.h"
#include "model/precision_check.h"
#include "runtime/auto_precision.h"
#include "runtime/precision_verdicts.h"
#include "tokenizer/tokenizer.h"

namespace onepass::app {
namespace {

using nlohmann::json;

struct CheckOptions {
  std::string model_dir;
  std::string precision;  // required unless --save-verdict (then auto)
  std::string dataset;
  int threads = 0;
  std::size_t batch_size = 16;
  bool save_verdict = false;
  std::string state_dir;
  std::string check_data;
};

[[noreturn]] void bad_line(std::size_t line, const std::string& what) {
  throw Error(ErrorKind::kInvalidInput, "dataset line " + std::to_string(line) + ": " + what);
}

int parse_label(const json& value, const model::ModelInfo& info, std::size_t line) {
  if (value.is_number_integer()) {
    const auto id = value.get<long long>();
    if (id < 0 || id >= info.num_labels)
      bad_line(line, "label " + std::to_string(id) + " is not a class id");
    return static_cast<int>(id);
  }
  if (value.is_string()) {
    const auto name = value.get<std::string>();
    for (std::size_t i = 0; i < info.id2label.size(); ++i) {
      if (info.id2label[i] == name) return static_cast<int>(i);
    }
    bad_line(line, "label '" + name.substr(0, 40) + "' is not one of the model's labels");
  }
  bad_line(line, "\"label\" must be a class id or a label name");
}

std::vector<std::int32_t> id_list(const json& value, const char* key, std::size_t line) {
  if (!value.is_array())
    bad_line(line, std::string("\"") + key + "\" must be an array of integers");
  std::vector<std::int32_t> ids;
  for (const auto& v : value) {
    if (!v.is_number_integer())
      bad_line(line, std::string("\"") + key + "\" must be an array of integers");
    ids.push_back(static_cast<std::int32_t>(v.get<long long>()));
  }
  return ids;
}

// The JSON boundary for --dataset: every line becomes a CheckExample or a line-numbered error.
std::vector<model::CheckExample> read_dataset(const std::string& path, const model::ModelInfo& info,
                                              const model::TextTokenizer* tokenize) {
  std::ifstream in(path);
  if (!in)
    throw Error(
        ErrorKind::kNotFound,
        "dataset file " + std::filesystem::path(path).filename().string() + " cannot be read");
  std::vector<model::CheckExample> out;
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
    model::CheckExample ex;
    if (doc.contains("input_ids")) {
      ex.input_ids = id_list(doc["input_ids"], "input_ids", line);
      if (doc.contains("token_type_ids"))
        ex.token_type_ids = id_list(doc["token_type_ids"], "token_type_ids", line);
    } else if (doc.contains("text") && doc["text"].is_string()) {
      if (tokenize == nullptr)
        bad_line(line, "the model folder has no tokenizer: give \"input_ids\"");
      std::optional<std::string> pair;
      if (doc.contains("text_pair") && !doc["text_pair"].is_null()) {
        if (!doc["text_pair"].is_string()) bad_line(line, "\"text_pair\" must be a string");
        pair = doc["text_pair"].get<std::string>();
      }
      auto ids = (*tokenize)(doc["text"].get<std::string>(),
                             pair ? std::optional<std::string_view>(*pair) : std::nullopt);
      ex.input_ids = std::move(ids.input_ids);
      ex.token_type_ids = std::move(ids.token_type_ids);
    } else {
      bad_line(line, "expected \"text\" (a string) or \"input_ids\"");
    }
    if (doc.contains("label") && !doc["label"].is_null())
      ex.label = parse_label(doc["label"], info, line);
    out.push_back(std::move(ex));
  }
  if (out.empty()) throw Error(ErrorKind::kInvalidInput, "the dataset has no examples");
  return out;
}

json shares(const std::vector<double>& share, const model::ModelInfo& info) {
  json j = json::object();
  for (std::size_t i = 0; i < share.size(); ++i) {
    j[i < info.id2label.size() ? info.id2label[i] : std::to_string(i)] = share[i];
  }
  return j;
}

// The folder's tokenizer: its default source, else (when that source is not in this build) one
// of the slow-tokenizer files; null when there is none (then token ids are synthetic).
std::unique_ptr<tokenizer::Tokenizer> open_tokenizer(const std::filesystem::path& dir,
                                                     std::string& note) {
  try {
    return tokenizer::load_tokenizer(dir);
  } catch (const Error& e) {
    if (e.kind() != ErrorKind::kNotFound && e.kind() != ErrorKind::kUnsupported) throw;
    note = e.what();
  }
  for (const char* file : {"vocab.txt", "sentencepiece.bpe.model", "spm.model"}) {
    if (!std::filesystem::exists(dir / file)) continue;
    try {
      return tokenizer::load_tokenizer(dir, dir / file);
    } catch (const Error& e) {
      if (e.kind() != ErrorKind::kNotFound && e.kind() != ErrorKind::kUnsupported) throw;
    }
  }
  return nullptr;
}

json gate_json(const model::GateResult& g) {
  json j{{"precision", kernels::precision_name(g.precision)}, {"pass", g.pass}};
  if (g.unsupported) {
    j["skipped"] = g.reason;
    return j;
  }
  j["examples"] = g.examples;
  j["label_agreement"] = g.label_agreement;
  j["max_share_shift"] = g.max_share_shift;
  j["min_cosine"] = g.min_cosine;
  if (!g.pass) j["refused"] = g.reason;
  return j;
}

// --precision auto: what `serve --precision auto` chooses for the model, on the same inputs
// (the built-in texts and --precision-check-data, tokenized as served); --save-verdict stores it
// where serve reads it (runtime/precision_verdicts.h). Exit 0: a precision was chosen.
int run_auto(const CheckOptions& o) {
  const auto start = std::chrono::steady_clock::now();
  if (!o.dataset.empty()) {
    throw Error(ErrorKind::kInvalidArgument,
                "--dataset compares one precision; with --precision auto give "
                "--precision-check-data (the texts serve adds to the gate)");
  }
  const std::filesystem::path dir = resolve_model_reference(o.model_dir);
  runtime::AutoPrecisionOptions data;
  if (!o.check_data.empty()) {
    try {
      data.check_data = runtime::read_check_data(o.check_data);
      data.check_data_sha256 = runtime::file_sha256_hex(o.check_data);
    } catch (const Error& e) {
      throw Error(ErrorKind::kInvalidArgument, std::string("--precision-check-data: ") + e.what());
    }
  }
  const auto tok = tokenizer::load_tokenizer(dir);  // serve's tokenizer, as serve loads it
  model::LoadOptions load;
  load.threads = o.threads;
  const auto result = model::load_auto_precision(
      [&dir](const model::LoadOptions& options) { return model::load_encoder(dir, options); }, load,
      runtime::model_check_examples(dir, *tok, data.check_data));
  json gates = json::array();
  for (const auto& g : result.verdict.gates) gates.push_back(gate_json(g));
  json report{{"model", hub::default_model_name(o.model_dir)},
              {"architecture", result.encoder->info().architecture},
              {"precision", "auto"},
              {"chosen", kernels::precision_name(result.verdict.chosen)},
              {"verdict", model::describe_verdict(result.verdict)},
              {"gates", gates},
              {"saved", nullptr}};
  if (o.save_verdict) {
    const runtime::VerdictCache cache(
        precision_state_dir(o.state_dir, hub::Environment::from_process().cache_dir));
    const auto key = cache.key(dir, data.check_data_sha256);
    std::string problem;
    if (!cache.store(key, result.verdict, problem))
      throw Error(ErrorKind::kInvalidArgument, "--save-verdict: " + problem);
    report["saved"] = cache.verdict_path(key).string();
  }
  report["seconds"] =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::cout << report.dump(2) << std::endl;
  return 0;
}

int run_check(const CheckOptions& o) {
  if (o.precision == "auto" || (o.precision.empty() && o.save_verdict)) return run_auto(o);
  if (o.precision.empty())
    throw Error(ErrorKind::kInvalidArgument, "--precision is required (bf16, int8 or auto)");
  if (o.save_verdict || !o.check_data.empty()) {
    throw Error(ErrorKind::kInvalidArgument,
                "--save-verdict and --precision-check-data go with --precision auto");
  }
  const auto start = std::chrono::steady_clock::now();
  const model::Precision precision = kernels::precision_from_name(o.precision);
  if (precision == model::Precision::kFp32) {
    throw Error(ErrorKind::kInvalidArgument,
                "--precision must be bf16 or int8 (fp32 is the reference)");
  }
  model::require_cpu_support(precision);
  const std::filesystem::path dir = resolve_model_reference(o.model_dir);
  model::LoadOptions load;
  load.threads = o.threads;
  const auto reference = model::load_encoder(dir, load);
  load.precision = precision;
  load.force_precision = true;  // this command reports; it does not refuse
  const auto candidate = model::load_encoder(dir, load);
  const model::ModelInfo& info = reference->info();

  std::string tokenizer_note;
  const auto tok = open_tokenizer(dir, tokenizer_note);
  model::TextTokenizer tokenize;
  if (tok) {
    tokenize = [&tok, &info](std::string_view text, std::optional<std::string_view> pair) {
      tokenizer::TruncationOptions truncation;
      truncation.max_length = static_cast<std::size_t>(info.max_tokens);
      auto enc = tok->encode(text, pair, truncation);
      return model::TokenizedText{std::move(enc.ids), std::move(enc.type_ids)};
    };
  }

  std::vector<model::CheckExample> examples;
  std::string source;
  if (!o.dataset.empty()) {
    examples = read_dataset(o.dataset, info, tok ? &tokenize : nullptr);
    source = std::filesystem::path(o.dataset).filename().string();
  } else if (tok && info.head == model::HeadKind::kSpanExtraction) {
    examples = runtime::gliner_check_examples(*tok, info, {});
    source = "built-in multilingual texts as GLiNER prompts";
  } else if (tok) {
    examples = model::tokenize_check_texts(tokenize, model::builtin_check_texts());
    source = "built-in multilingual texts";
  } else {
    examples = model::synthetic_check_inputs(info, model::builtin_check_texts().size());
    source = "built-in synthetic token ids (no usable tokenizer: " + tokenizer_note + ")";
  }
  const auto r =
      model::compare_precisions(*reference, *candidate, examples, precision, o.batch_size);

  json report{{"model", hub::default_model_name(o.model_dir)},
              {"architecture", info.architecture},
              {"precision", kernels::precision_name(precision)},
              {"inputs", source},
              {"examples", r.examples},
              {"label_agreement", r.label_agreement},
              {"max_share_shift", r.max_share_shift},
              {"widest_flipped_margin", r.widest_flipped_margin},
              {"max_abs_logit_diff", r.max_abs_logit_diff},
              {"mean_abs_logit_diff", r.mean_abs_logit_diff},
              {"min_cosine", r.min_cosine},
              {"mean_cosine", r.mean_cosine},
              {"non_finite", r.non_finite},
              {"neighbour_agreement", r.neighbour_agreement},
              {"token_agreement", r.token_agreement},
              {"span_agreement", r.span_agreement},
              {"entity_agreement", r.entity_agreement},
              {"query_agreement", r.query_agreement},
              {"queries", r.queries},
              {"bar",
               {{"min_label_agreement", 0.99},
                {"max_share_shift", 0.10},
                {"non_finite", 0},
                {"min_embedding_cosine", 0.99}}},
              {"pass", r.pass},
              {"failures", r.failures}};
  if (r.classifier && !r.reference_share.empty()) {
    report["reference_share"] = shares(r.reference_share, info);
    report["candidate_share"] = shares(r.candidate_share, info);
  }
  if (r.reference_accuracy) {
    report["reference_accuracy"] = *r.reference_accuracy;
    report["candidate_accuracy"] = *r.candidate_accuracy;
  }
  report["seconds"] =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::cout << report.dump(2) << std::endl;
  return r.pass ? 0 : 1;
}

const CommandRegistration kRegistration{Command{
    "check",
    "Compare a reduced precision (bf16, int8) with fp32 on a model; exit 1 if it fails the "
    "accuracy bar",
    [](CLI::App& sub) -> std::function<int()> {
      auto options = std::make_shared<CheckOptions>();
      sub.add_option("--model", options->model_dir, "model folder or Hub id org/name[@revision]")
          ->required();
      sub.add_option("--precision", options->precision,
                     "bf16 or int8; or auto: what serve --precision auto would choose");
      sub.add_option(
          "--dataset", options->dataset,
          "JSON lines: {text, text_pair?, label?} or {input_ids, token_type_ids?, label?}");
      sub.add_option("--threads", options->threads, "intra-op threads (0: all cores)");
      sub.add_option("--batch-size", options->batch_size, "sequences per forward pass")
          ->check(CLI::Range(1, 1024));
      sub.add_flag("--save-verdict", options->save_verdict,
                   "with --precision auto (the default then): save the verdict where serve "
                   "--precision auto reads it, so the server starts without the gate");
      sub.add_option("--state-dir", options->state_dir,
                     "the verdicts' folder (default: onepass beside the Hugging Face hub cache)");
      sub.add_option("--precision-check-data", options->check_data,
                     "JSON lines {text, text_pair?} that serve adds to the gate (same file, "
                     "same verdict key)");
      return [options] { return run_check(*options); };
    }}};

}  // namespace
}  // namespace onepass::app
