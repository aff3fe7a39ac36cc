// `onepass info [REF] [--check] [--json]`: will this model load, and what will it serve?
// REF is a model folder or a Hub id (`org/name[@revision]`, resolved through the
// huggingface_hub cache like every other command). The answer reuses the code that serves: the
// loader's architecture table and config reader, the runtime's model description (task, labels,
// zero-shot indices, pooling, input limit), the weight headers, the runtime's tokenizer choice,
// and finally a real fp32 load. --check adds the bf16/int8 accuracy gate. Exit 0 when the model
// would load, 2 otherwise (the reason is printed). Without REF: the build, what it supports, and
// the code it runs on this CPU (the instruction set each dispatched kernel chose, the GEMMs).
#include <fmt/format.h>

#include <iostream>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "apps/onepass/command.h"
#include "apps/onepass/model_reference.h"
#include "base/error.h"
#include "base/version.h"
#include "hub/resolve.h"
#include "kernels/dispatch.h"
#include "kernels/matmul.h"
#include "model/auto_precision.h"
#include "model/encoder.h"
#include "model/heads/dense_module.h"
#include "model/heads/postprocess.h"
#include "model/precision_check.h"
#include "runtime/auto_precision.h"
#include "runtime/model_config.h"
#include "runtime/precision_verdicts.h"
#include "runtime/tasks.h"
#include "tokenizer/tokenizer.h"
#include "weights/config.h"
#include "weights/weight_summary.h"

namespace onepass::app {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

struct InfoOptions {
  std::string reference;
  bool check = false;
  bool json = false;
  std::string state_dir;  // --precision auto's verdicts (model_reference.h)
};

constexpr const char* kMemoryMethod =
    "weights only, activations excluded: the nn.Linear matrices (rank-2 weights other than "
    "embedding tables) at 4, 2 or 1 bytes per value, plus one fp32 scale per output row in "
    "int8; embedding tables, biases and norms stay fp32 in every precision";

// The files each tokenizer source reads (tokenizer/sources.h), those present in the folder.
std::vector<std::string> tokenizer_files(const fs::path& dir, std::string_view source) {
  std::vector<std::string> candidates;
  if (source == "tokenizer.json") {
    candidates = {"tokenizer.json"};
  } else if (source == "sentencepiece") {
    // The first model file present, in tokenizer::load_tokenizer's order, then its configs.
    for (const char* model : {"spm.model", "sentencepiece.bpe.model", "tokenizer.model"}) {
      if (fs::is_regular_file(dir / model)) {
        candidates = {model};
        break;
      }
    }
    for (const char* f : {"tokenizer_config.json", "special_tokens_map.json", "added_tokens.json"})
      candidates.emplace_back(f);
  } else if (source == "bpe_files") {
    candidates = {"vocab.json", "merges.txt", "tokenizer_config.json", "special_tokens_map.json",
                  "added_tokens.json"};
  } else {
    candidates = {"vocab.txt", "tokenizer_config.json"};
  }
  std::vector<std::string> present;
  for (const auto& f : candidates) {
    if (fs::exists(dir / f)) present.push_back(f);
  }
  return present;
}

json precision_check(const model::Encoder& reference, const fs::path& dir,
                     const tokenizer::Tokenizer* tok, model::Precision precision) {
  json out{{"precision", kernels::precision_name(precision)}};
  try {
    model::require_cpu_support(precision);
  } catch (const Error& e) {
    out["skipped"] = e.what();
    return out;
  }
  model::LoadOptions load;
  load.precision = precision;
  load.force_precision = true;  // this command reports; it does not refuse
  const auto candidate = model::load_encoder(dir, load);
  const model::ModelInfo& info = reference.info();
  std::vector<model::CheckExample> examples;
  if (tok != nullptr && info.head == model::HeadKind::kSpanExtraction) {
    examples = runtime::gliner_check_examples(*tok, info, {});  // GLiNER's prompts
  } else if (tok != nullptr) {
    const model::TextTokenizer tokenize = [tok, &info](std::string_view text,
                                                       std::optional<std::string_view> pair) {
      tokenizer::TruncationOptions truncation;
      truncation.max_length = static_cast<std::size_t>(info.max_tokens);
      auto enc = tok->encode(text, pair, truncation);
      return model::TokenizedText{std::move(enc.ids), std::move(enc.type_ids)};
    };
    examples = model::tokenize_check_texts(tokenize, model::builtin_check_texts());
  } else {
    examples = model::synthetic_check_inputs(info, model::builtin_check_texts().size());
  }
  const auto r = model::compare_precisions(reference, *candidate, examples, precision);
  out["pass"] = r.pass;
  out["examples"] = r.examples;
  out["label_agreement"] = model::gate_result(r).label_agreement;  // the task's own agreement
  out["max_share_shift"] = r.max_share_shift;
  out["min_cosine"] = r.min_cosine;
  out["failures"] = r.failures;
  return out;
}

// Everything info says about a resolved folder. "problems" empty means the model loads.
// What `serve --precision auto` would serve: the saved verdict for these files, this onepass and
// this CPU when there is one (built-in texts only), and with --check what the checks above say.
json precision_auto(const fs::path& dir, const fs::path& state_dir, const json* checks) {
  json out{{"state_dir", state_dir.string()}};
  try {
    const runtime::VerdictCache cache(state_dir);
    const auto key = cache.key(dir, "", /*remember=*/false);
    std::string problem;
    const auto verdict = cache.find(key, problem);
    out["cached"] = verdict.has_value();
    if (verdict) {
      out["precision"] = kernels::precision_name(verdict->chosen);
      out["verdict"] = model::describe_verdict(*verdict);
      out["cache_file"] = cache.verdict_path(key).string();
    } else if (!problem.empty()) {
      out["cache_problem"] = problem;
    }
  } catch (const Error& e) {
    out["cached"] = false;
    out["cache_problem"] = e.what();
  }
  if (checks != nullptr) {
    std::string chosen = "fp32";
    for (const auto p : model::kAutoCandidates) {
      for (const auto& c : *checks) {
        if (c["precision"] == kernels::precision_name(p) && c.value("pass", false) &&
            chosen == "fp32")
          chosen = kernels::precision_name(p);
      }
    }
    out["by_check"] = chosen;
  }
  return out;
}

json describe(const std::string& reference, const fs::path& dir, bool check,
              const fs::path& state_dir) {
  json r{{"reference", reference}, {"folder", dir.string()}};
  std::vector<std::string> problems;

  // The loader's own config reader and architecture table decide support, as load_encoder does.
  try {
    if (model::is_gliner_folder(dir)) {
      // GLiNER: gliner_config.json and its backbone (model/architectures/gliner).
      const model::ModelInfo info = model::describe_model_folder(dir);
      r["architecture"] = info.architecture;
      r["model_type"] = "gliner";
      const model::SpanExtractionInfo& span = info.span;
      r["span_extraction"] = {{"span_mode", span.span_mode},      {"max_width", span.max_width},
                              {"max_len", span.max_words},        {"max_types", span.max_types},
                              {"backbone", span.backbone},        {"ent_token", span.entity_token},
                              {"sep_token", span.separator_token}};
    } else {
      const auto config = weights::load_pretrained_config(dir);
      const std::string arch = config.architectures.empty() ? "" : config.architectures.front();
      r["architecture"] = arch;
      r["model_type"] = config.model_type;
      if (!model::is_supported_architecture(arch)) {
        problems.push_back(arch.empty() ? "config.json names no architecture"
                                        : "unsupported architecture " + arch.substr(0, 80));
        r["supported_architectures"] = model::supported_architectures();
      }
    }
  } catch (const Error& e) {
    problems.emplace_back(e.what());
  }

  if (problems.empty()) {
    try {
      const auto d = runtime::describe_model_folder(dir.filename().string(), dir);
      r["task"] = runtime::task_name(d.task);
      r["task_description"] = runtime::describe_task(d);
      r["pipelines"] = runtime::pipelines_of(d);  // the HF_TASK values it serves
      r["labels"] = d.info.id2label;
      r["multi_label"] = d.info.multi_label;
      r["entailment_index"] = d.entailment_index;
      r["contradiction_index"] = d.contradiction_index;
      r["zero_shot"] = runtime::serves_pipeline(d, "zero-shot-classification");
      if (d.task == runtime::ModelTask::kReranker) {
        r["cross_encoder_activation"] = model::heads::activation_name(d.cross_encoder_activation);
      }
      r["pooling"] = runtime::pooling_name(d.pooling);
      r["max_input_length"] = d.max_input_length;
      if (d.max_seq_length > 0) r["max_seq_length"] = d.max_seq_length;
      if (!d.prompts.empty()) r["prompts"] = d.prompts;
      if (d.default_prompt) r["default_prompt"] = *d.default_prompt;
      if (!d.default_prompt_name.empty()) r["default_prompt_name"] = d.default_prompt_name;
      if (d.task == runtime::ModelTask::kEmbedder) {
        r["embedding_size"] = runtime::embedding_size(d);
        r["normalizes"] = d.normalizes;
        json dense = json::array();
        for (const auto& module : d.dense_modules) {
          model::heads::DenseModule::load(dir, module);  // its weights, read as serve reads them
          dense.push_back({{"path", module.path},
                           {"in_features", module.in_features},
                           {"out_features", module.out_features},
                           {"bias", module.bias},
                           {"activation", model::heads::activation_name(module.activation)}});
        }
        if (!dense.empty()) r["dense_modules"] = dense;
      }
    } catch (const Error& e) {
      problems.emplace_back(e.what());
    }
  }

  try {
    const auto w = weights::summarize_weights(dir);
    r["weight_format"] =
        w.files.format == weights::WeightFormat::kTorch ? "pytorch" : "safetensors";
    json files = w.files.files;
    if (!w.files.index.empty()) files.insert(files.begin(), w.files.index);
    r["weight_files"] = files;
    r["weight_bytes"] = w.file_bytes;
    r["parameter_count"] = w.parameter_count;
    r["weight_dtypes"] = w.parameters_by_dtype;
    std::string dtype;
    std::int64_t most = -1;
    for (const auto& [name, n] : w.parameters_by_dtype) {
      if (n > most) {
        dtype = name;
        most = n;
      }
    }
    r["weight_dtype"] = dtype;
    const std::int64_t rest = w.parameter_count - w.matrix_parameters;
    r["memory_bytes"] = {{"fp32", 4 * w.parameter_count},
                         {"bf16", 2 * w.matrix_parameters + 4 * rest},
                         {"int8", w.matrix_parameters + 4 * w.matrix_rows + 4 * rest}};
    r["memory_estimate"] = kMemoryMethod;
  } catch (const Error& e) {
    problems.emplace_back(e.what());
  }

  // The runtime loads the folder's tokenizer with the model: a failure here fails the load.
  std::unique_ptr<tokenizer::Tokenizer> tok;
  try {
    tok = tokenizer::load_tokenizer(dir);
    r["tokenizer"] = std::string(tok->source_kind());
    r["tokenizer_files"] = tokenizer_files(dir, tok->source_kind());
  } catch (const Error& e) {
    problems.push_back(std::string("tokenizer: ") + e.what());
  }

  // The proof: the fp32 load serve would do (shapes against config.json, NaN/Inf scan).
  if (problems.empty()) {
    try {
      const auto encoder = model::load_encoder(dir);
      if (check) {
        json checks = json::array();
        for (const auto p : {model::Precision::kBf16, model::Precision::kInt8}) {
          checks.push_back(precision_check(*encoder, dir, tok.get(), p));
        }
        r["precision_check"] = checks;
      }
      r["precision_auto"] = precision_auto(dir, state_dir, check ? &r["precision_check"] : nullptr);
    } catch (const Error& e) {
      problems.emplace_back(e.what());
    }
  }
  r["loads"] = problems.empty();
  r["problems"] = problems;
  return r;
}

std::string mib(std::int64_t bytes) {
  return fmt::format("{:.1f} MiB", static_cast<double>(bytes) / (1 << 20));
}

void print_text(const json& r) {
  std::cout << "model: " << r["reference"].get<std::string>() << "\n";
  if (r["reference"] != r["folder"])
    std::cout << "folder: " << r["folder"].get<std::string>() << "\n";
  if (r["loads"].get<bool>()) {
    std::cout << "loads: yes\n";
  } else {
    std::cout << "loads: no\n";
    for (const auto& p : r["problems"]) std::cout << "  problem: " << p.get<std::string>() << "\n";
  }
  if (r.contains("architecture")) {
    std::cout << "architecture: " << r["architecture"].get<std::string>() << " (model_type "
              << r["model_type"].get<std::string>() << ")\n";
  }
  if (r.contains("supported_architectures")) {
    std::cout << "supported architectures:";
    for (const auto& a : r["supported_architectures"]) std::cout << " " << a.get<std::string>();
    std::cout << "\n";
  }
  if (r.contains("task")) {
    std::cout << "task: " << r["task"].get<std::string>();
    if (r["zero_shot"].get<bool>()) {
      std::cout << " (zero-shot: entailment label " << r["entailment_index"].get<int>() << ")";
    }
    if (r.contains("cross_encoder_activation")) {
      // What CrossEncoder.predict (the toolkit's sentence-ranking) and vLLM's /score apply.
      std::cout << " (CrossEncoder scores: " << r["cross_encoder_activation"].get<std::string>()
                << " of the logit)";
    }
    std::cout << "\n";
    if (!r["labels"].empty()) {
      std::cout << "labels:";
      for (std::size_t i = 0; i < r["labels"].size(); ++i) {
        std::cout << (i ? ", " : " ") << i << " " << r["labels"][i].get<std::string>();
      }
      std::cout << (r["multi_label"].get<bool>() ? " (multi-label)\n" : "\n");
    }
    if (r.contains("span_extraction")) {
      const json& s = r["span_extraction"];
      std::cout << "entity extraction (GLiNER): labels chosen per request at /extract; span mode "
                << s["span_mode"].get<std::string>() << ", spans of up to "
                << s["max_width"].get<int>() << " words, the first " << s["max_len"].get<int>()
                << " words of a text, trained with up to " << s["max_types"].get<int>()
                << " labels, backbone " << s["backbone"].get<std::string>() << "\n";
    } else {
      std::cout << "pooling: " << r["pooling"].get<std::string>() << "\n";
    }
    if (r.contains("embedding_size")) {
      std::cout << "embedding: " << r["embedding_size"].get<int>() << " values";
      if (r.contains("dense_modules")) {
        std::cout << " (sentence-transformers Dense modules";
        const char* separator = " ";
        for (const auto& m : r["dense_modules"]) {
          std::cout << separator << m["path"].get<std::string>() << " "
                    << m["in_features"].get<int>() << " -> " << m["out_features"].get<int>() << " "
                    << m["activation"].get<std::string>();
          separator = ", ";
        }
        std::cout << ")";
      }
      std::cout << (r["normalizes"].get<bool>() ? ", normalised\n" : "\n");
    }
    std::cout << "max input length: " << r["max_input_length"].get<int>() << " tokens";
    if (r.contains("max_seq_length")) {
      std::cout << " (sentence-transformers max_seq_length " << r["max_seq_length"].get<int>()
                << ")";
    }
    std::cout << "\n";
    if (r.contains("prompts")) {
      std::cout << "prompts:";
      for (const auto& [name, text] : r["prompts"].items())
        std::cout << " " << name << " " << json(text.get<std::string>()).dump() << ";";
      std::cout << "\n";
    }
    if (r.contains("default_prompt")) {
      std::cout << "default prompt: " << r["default_prompt"].dump();
      if (r.contains("default_prompt_name"))
        std::cout << " (" << r["default_prompt_name"].get<std::string>() << ")";
      std::cout << "\n";
    }
  }
  if (r.contains("parameter_count")) {
    std::cout << "parameters: " << r["parameter_count"].get<std::int64_t>() << " ("
              << r["weight_dtype"].get<std::string>() << ")\n";
    std::cout << "weights:";
    for (const auto& f : r["weight_files"]) std::cout << " " << f.get<std::string>();
    std::cout << " (" << mib(r["weight_bytes"].get<std::int64_t>()) << ")\n";
    const auto& m = r["memory_bytes"];
    std::cout << "memory, estimated: fp32 " << mib(m["fp32"].get<std::int64_t>()) << ", bf16 "
              << mib(m["bf16"].get<std::int64_t>()) << ", int8 "
              << mib(m["int8"].get<std::int64_t>()) << "\n  (" << kMemoryMethod << ")\n";
  }
  if (r.contains("tokenizer")) {
    std::cout << "tokenizer: " << r["tokenizer"].get<std::string>() << " from";
    for (const auto& f : r["tokenizer_files"]) std::cout << " " << f.get<std::string>();
    std::cout << "\n";
  }
  if (r.contains("precision_check")) {
    for (const auto& c : r["precision_check"]) {
      std::cout << "precision check " << c["precision"].get<std::string>() << ": ";
      if (c.contains("skipped")) {
        std::cout << "skipped (" << c["skipped"].get<std::string>() << ")\n";
        continue;
      }
      std::cout << (c["pass"].get<bool>() ? "pass" : "FAIL") << ", label agreement "
                << fmt::format("{:.1f}%", 100 * c["label_agreement"].get<double>()) << "\n";
      for (const auto& f : c["failures"]) std::cout << "  " << f.get<std::string>() << "\n";
    }
  }
  if (r.contains("precision_auto")) {
    const auto& a = r["precision_auto"];
    std::cout << "precision auto: ";
    if (a["cached"].get<bool>()) {
      std::cout << a["precision"].get<std::string>()
                << " (saved verdict: " << a["verdict"].get<std::string>() << ")\n";
    } else {
      std::cout << "no saved verdict in " << a["state_dir"].get<std::string>();
      if (a.contains("cache_problem"))
        std::cout << " (" << a["cache_problem"].get<std::string>() << ")";
      std::cout << "; `onepass check --model M --save-verdict` saves one\n";
    }
    if (a.contains("by_check"))
      std::cout << "precision auto by the checks above: " << a["by_check"].get<std::string>()
                << "\n";
  }
}

// The build and the code it runs here: the -march of its baseline, the instruction sets the
// dispatched kernels were compiled for besides it (kernels/dispatch.h), and the code each
// kernel family and Linear precision runs on this CPU.
json describe_build() {
  const kernels::CodePaths p = kernels::code_paths();
  return json{{"version", std::string(onepass::version())},
              {"supported_architectures", model::supported_architectures()},
              {"build", {{"march", p.march}, {"baseline", p.baseline}, {"dispatched", p.variants}}},
              {"code_paths",
               {{"cpu", p.cpu},
                {"elementwise", p.elementwise},
                {"small_gemm", p.small_gemm},
                {"bf16_products", p.bf16_products},
                {"quantize", p.quantize},
                {"fp32_gemm", kernels::fp32_linear_kernel()},
                {"bf16_gemm", kernels::bf16_linear_kernel()},
                {"int8_gemm", kernels::int8_linear_kernel()}}}};
}

// The code_paths entries in text: key, label, what runs there.
struct CodePathLine {
  const char* key;
  const char* label;
  const char* covers;
};
constexpr CodePathLine kCodePathLines[] = {
    {"elementwise", "elementwise", "layer_norm, softmax, activations"},
    {"small_gemm", "small_gemm", "attention's fp32 products"},
    {"bf16_products", "bf16 products", "attention's bf16 products"},
    {"quantize", "quantize", "bf16 / int8 conversions"},
    {"fp32_gemm", "fp32 GEMM", "Linear layers"},
    {"bf16_gemm", "bf16 GEMM", "Linear layers, --precision bf16"},
    {"int8_gemm", "int8 GEMM", "Linear layers, --precision int8"},
};

void print_build(const json& b) {
  std::cout << "onepass " << b["version"].get<std::string>() << "\narchitectures:";
  for (const auto& a : b["supported_architectures"]) std::cout << " " << a.get<std::string>();
  std::cout << "\nweights: model.safetensors (and sharded index), pytorch_model.bin (and sharded "
               "index; read without unpickling)\n"
               "tokenizers: tokenizer.json, SentencePiece (.model), WordPiece (vocab.txt)\n";
  const auto& build = b["build"];
  const auto march = build["march"].get<std::string>();
  std::cout << "build: " << (march.empty() ? "the compiler's default -march" : "-march=" + march)
            << " (baseline code: " << build["baseline"].get<std::string>();
  if (!build["dispatched"].empty()) {
    const char* separator = "; kernels also compiled for ";
    for (const auto& isa : build["dispatched"]) {
      std::cout << separator << isa.get<std::string>();
      separator = ", ";
    }
    std::cout << ", chosen at run time";
  }
  std::cout << ")\n";
  const auto& paths = b["code_paths"];
  std::cout << "this CPU: " << paths["cpu"].get<std::string>() << "\n";
  for (const auto& line : kCodePathLines) {
    std::cout << "  " << line.label << ": " << paths[line.key].get<std::string>() << " ("
              << line.covers << ")\n";
  }
}

int run_info(const InfoOptions& o) {
  if (o.reference.empty()) {
    const json build = describe_build();
    if (o.json) {
      std::cout << build.dump(2) << std::endl;
    } else {
      print_build(build);
    }
    return 0;
  }
  const fs::path dir = hub::resolve_model(o.reference, hub::Environment::from_process());
  const json r =
      describe(o.reference, dir, o.check,
               precision_state_dir(o.state_dir, hub::Environment::from_process().cache_dir));
  if (o.json) {
    std::cout << r.dump(2) << std::endl;
  } else {
    print_text(r);
  }
  return r["loads"].get<bool>() ? 0 : 2;
}

const CommandRegistration kRegistration{Command{
    "info", "Will a model (folder or Hub id) load, and what will it serve? Without one: the build",
    [](CLI::App& sub) -> std::function<int()> {
      auto options = std::make_shared<InfoOptions>();
      sub.add_option("model", options->reference, "model folder or Hub id org/name[@revision]");
      sub.add_flag(
          "--check", options->check,
          "also run the bf16 and int8 accuracy gate against fp32 (model/precision_check.h)");
      sub.add_flag("--json", options->json, "print one JSON object (for scripts)");
      sub.add_option("--state-dir", options->state_dir,
                     "where serve --precision auto keeps its verdicts (default: onepass beside "
                     "the Hugging Face hub cache)");
      return [options] { return run_info(*options); };
    }}};

}  // namespace
}  // namespace onepass::app
