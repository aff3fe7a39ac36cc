// `onepass bench`: load-test an encoder endpoint (onepass or any server with a supported dialect),
// `onepass bench compare`: the same workload against several endpoints plus their agreement,
// `onepass bench report`: results JSON files into one offline HTML page of charts.
// This file parses flags and wires the bench module; it is also the only place the bench meets
// onepass's tokenizer (client-side tokenization for the KServe tensor form), so src/bench stays
// a pure HTTP client that can measure other servers.
#include <fmt/format.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>
#include <tuple>

#include "apps/onepass/cmd_bench_sagemaker.h"
#include "apps/onepass/command.h"
#include "aws/shared_config.h"
#include "base/error.h"
#include "bench/bench.h"
#include "bench/report.h"
#include "bench/results.h"
#include "bench/task.h"
#include "tokenizer/tokenizer.h"

namespace onepass::app {
namespace {

using bench::EndpointSpec;
using bench::Workload;

struct BenchFlags {
  std::vector<std::string> endpoints, sagemaker_endpoints, dialects{"onepass"}, models;
  std::vector<std::string> target_model, target_container, inference_component;
  std::string name, api_key, region, profile;
  std::string task = "auto", dataset, request_rate = "inf", burstiness = "1.0";
  std::string sweep_batch, sweep_concurrency, tokenizer_dir, label_names, output;
  std::size_t requests = 100, warmup = 3, concurrency = 1, batch_size = 1, max_len = 512;
  bool pad_to_max = false, no_progress = false;
  double timeout_s = 30, tolerance = 1e-3;
  std::uint64_t seed = 0;
};

void add_workload_flags(CLI::App& app, BenchFlags& f, bool compare) {
  app.add_option(
      "--endpoint", f.endpoints,
      compare ? "NAME=URL of each endpoint (repeat)"
              : "base URL, e.g. http://127.0.0.1:8080, or grpc://HOST:PORT for a gRPC dialect");
  app.add_option("--sagemaker-endpoint", f.sagemaker_endpoints,
                 compare ? "NAME=ENDPOINT of each SageMaker endpoint (repeat; beside --endpoint)"
                         : "SageMaker endpoint name: InvokeEndpoint, SigV4-signed");
  app.add_option("--region", f.region,
                 "AWS region of the SageMaker endpoints (default: AWS_REGION, "
                 "AWS_DEFAULT_REGION, the profile's)");
  app.add_option("--profile", f.profile,
                 "AWS shared-files profile for credentials and region (wins over the "
                 "environment's keys)");
  app.add_option(
      "--dialect", f.dialects,
      "onepass|hf|tei|triton (kserve)|vllm|openai|cohere over http[s]://, kserve-grpc|tei-grpc "
      "over grpc://; in compare mode also NAME=DIALECT per endpoint");
  app.add_option("--model", f.models, "model name for routes and bodies (NAME=MODEL per endpoint)");
  if (!compare) app.add_option("--name", f.name, "endpoint name in the results (default: dialect)");
  const char* per = compare ? " (NAME=VALUE per endpoint)" : "";
  app.add_option("--target-model", f.target_model,
                 std::string("X-Amzn-SageMaker-Target-Model header") + per);
  app.add_option("--target-container", f.target_container,
                 std::string("X-Amzn-SageMaker-Target-Container-Hostname header") + per);
  app.add_option("--inference-component", f.inference_component,
                 std::string("X-Amzn-SageMaker-Inference-Component header") + per);
  app.add_option("--api-key", f.api_key,
                 "sent as Authorization: Bearer KEY (gRPC: authorization metadata)");
  app.add_option("--task", f.task, bench::task_help());
  app.add_option("--dataset", f.dataset,
                 "JSON lines {text[,text_pair][,label]} (default: bundled "
                 "multilingual NLI set)");
  app.add_option("-n,--num-requests", f.requests, "requests per run")->capture_default_str();
  app.add_option("--warmup", f.warmup, "unmeasured requests before each run")
      ->capture_default_str();
  app.add_option("--concurrency", f.concurrency, "cap on requests in flight")
      ->capture_default_str();
  app.add_option("--request-rate", f.request_rate, "requests/s, or inf")->capture_default_str();
  app.add_option("--burstiness", f.burstiness,
                 "gamma shape of inter-arrival times (1 = Poisson, "
                 "inf = fixed interval)")
      ->capture_default_str();
  app.add_option("--batch-size", f.batch_size, "inputs per request")->capture_default_str();
  app.add_option("--sweep-batch", f.sweep_batch, "batch sizes to sweep, e.g. 1,8,32");
  app.add_option("--sweep-concurrency", f.sweep_concurrency,
                 "concurrencies to sweep, e.g. 1,4,8,16");
  app.add_flag("--pad-to-max", f.pad_to_max, "make every input exactly --max-len tokens");
  app.add_option("--max-len", f.max_len, "tokens per input with --pad-to-max")
      ->capture_default_str();
  app.add_option(
      "--tokenizer", f.tokenizer_dir,
      "model folder: tokenize on the client (triton, kserve-grpc tensors) and take id2label");
  app.add_option("--label-names", f.label_names,
                 "comma-separated labels by index (triton, kserve-grpc logits)");
  app.add_option("--timeout", f.timeout_s, "seconds per request")->capture_default_str();
  app.add_option("--seed", f.seed, "seed of the arrival schedule")->capture_default_str();
  app.add_option("--tolerance", f.tolerance, "tolerance of the content verification")
      ->capture_default_str();
  app.add_flag("--no-progress", f.no_progress, "no progress bar on stderr");
  app.add_option("-o,--output", f.output, "write the results as JSON");
}

double parse_positive(const std::string& text, const char* flag) {
  if (text == "inf" || text == "infinity") return std::numeric_limits<double>::infinity();
  char* end = nullptr;
  const double value = std::strtod(text.c_str(), &end);
  if (text.empty() || *end != '\0' || !(value > 0) || std::isinf(value)) {
    throw Error(ErrorKind::kInvalidArgument,
                std::string(flag) + " '" + text + "' is not a positive number or inf");
  }
  return value;
}

std::vector<std::size_t> parse_list(const std::string& text, const char* flag) {
  std::vector<std::size_t> values;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) {
    char* end = nullptr;
    const long value = std::strtol(item.c_str(), &end, 10);
    if (item.empty() || *end != '\0' || value <= 0) {
      throw Error(ErrorKind::kInvalidArgument,
                  std::string(flag) + " '" + text + "' is not a list of positive integers");
    }
    values.push_back(static_cast<std::size_t>(value));
  }
  return values;
}

// "NAME=VALUE" entries override a plain VALUE for that endpoint.
std::string value_for(const std::vector<std::string>& entries, const std::string& endpoint,
                      const std::string& fallback) {
  std::string plain = fallback;
  for (const auto& e : entries) {
    const auto eq = e.find('=');
    if (eq == std::string::npos) {
      plain = e;
    } else if (e.substr(0, eq) == endpoint) {
      return e.substr(eq + 1);
    }
  }
  return plain;
}

// The thin adapter between onepass's tokenizer and the bench's TokenizeFn.
void attach_tokenizer(const std::string& dir, bench::DialectOptions& options) {
  std::shared_ptr<const tokenizer::Tokenizer> tok = tokenizer::load_tokenizer(dir);
  for (const char* pad : {"[PAD]", "<pad>"}) {
    if (auto id = tok->token_to_id(pad)) {
      options.pad_id = *id;
      break;
    }
  }
  options.tokenize = [tok](const bench::Sample& sample, std::size_t max_len) {
    tokenizer::TruncationOptions truncation;
    truncation.max_length = max_len;
    std::optional<std::string_view> pair;
    if (sample.text_pair) pair = *sample.text_pair;
    const tokenizer::Encoding e = tok->encode(sample.text, pair, truncation);
    bench::TokenizedInput out;
    out.ids.assign(e.ids.begin(), e.ids.end());
    out.type_ids.assign(e.type_ids.begin(), e.type_ids.end());
    return out;
  };
  std::ifstream config(std::filesystem::path(dir) / "config.json");
  if (!config || !options.label_names.empty()) return;
  const auto doc = nlohmann::json::parse(config, nullptr, false);
  if (!doc.is_object() || !doc.contains("id2label") || !doc["id2label"].is_object()) return;
  std::map<long, std::string> by_index;
  for (const auto& [key, value] : doc["id2label"].items()) {
    if (value.is_string())
      by_index[std::strtol(key.c_str(), nullptr, 10)] = value.get<std::string>();
  }
  for (const auto& [index, label] : by_index) options.label_names.push_back(label);
}

// The value of a per-endpoint flag: in compare mode "NAME=VALUE" entries pick their endpoint
// and a plain entry is everyone's; a single endpoint takes the last entry as written.
std::string per_endpoint(const std::vector<std::string>& entries, const std::string& endpoint,
                         bool compare) {
  if (entries.empty()) return {};
  return compare ? value_for(entries, endpoint, "") : entries.back();
}

std::pair<std::string, std::string> split_named(const std::string& entry, const char* flag) {
  const auto eq = entry.find('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == entry.size()) {
    throw Error(ErrorKind::kInvalidArgument,
                std::string("compare needs ") + flag + " NAME=VALUE, got '" + entry + "'");
  }
  return {entry.substr(0, eq), entry.substr(eq + 1)};
}

std::vector<EndpointSpec> endpoint_specs(const BenchFlags& f, bool compare) {
  bench::DialectOptions common;
  common.pad_to_max = f.pad_to_max;
  common.max_len = f.max_len;
  if (!f.api_key.empty()) common.headers.emplace_back("Authorization", "Bearer " + f.api_key);
  if (!f.label_names.empty()) {
    std::stringstream in(f.label_names);
    for (std::string label; std::getline(in, label, ',');) common.label_names.push_back(label);
  }
  if (!f.tokenizer_dir.empty()) attach_tokenizer(f.tokenizer_dir, common);

  if (!compare && f.endpoints.size() + f.sagemaker_endpoints.size() > 1) {
    throw Error(ErrorKind::kInvalidArgument,
                "one --endpoint or --sagemaker-endpoint; use `onepass bench compare` for more");
  }
  // Each entry: (name, url or SageMaker endpoint name, is SageMaker).
  std::vector<std::tuple<std::string, std::string, bool>> entries;
  for (const auto& entry : f.endpoints) {
    if (compare) {
      auto [name, url] = split_named(entry, "--endpoint");
      entries.emplace_back(name, url, false);
    } else {
      entries.emplace_back("", entry, false);
    }
  }
  for (const auto& entry : f.sagemaker_endpoints) {
    if (compare) {
      auto [name, endpoint] = split_named(entry, "--sagemaker-endpoint");
      entries.emplace_back(name, endpoint, true);
    } else {
      entries.emplace_back("", entry, true);
    }
  }
  std::optional<SageMakerAccess> access;
  std::vector<EndpointSpec> specs;
  for (const auto& [name, where, is_sagemaker] : entries) {
    EndpointSpec spec;
    spec.options = common;
    spec.name = name;
    spec.dialect = value_for(f.dialects, spec.name, "onepass");
    spec.options.model = value_for(f.models, spec.name, "");
    if (!compare) spec.name = f.name.empty() ? spec.dialect : f.name;
    for (const auto& [header, values] :
         {std::pair{"X-Amzn-SageMaker-Target-Model", &f.target_model},
          std::pair{"X-Amzn-SageMaker-Target-Container-Hostname", &f.target_container},
          std::pair{"X-Amzn-SageMaker-Inference-Component", &f.inference_component}}) {
      const std::string value = per_endpoint(*values, name, compare);
      if (!value.empty()) spec.options.headers.emplace_back(header, value);
    }
    if (is_sagemaker) {
      // Validated before any credential lookup: a typo is the user's, not AWS's.
      spec.url = bench::sagemaker_endpoint_url(aws::process_environment(), "", where);
      if (!access) access = resolve_sagemaker_access(f.region, f.profile);
      spec.url = bench::sagemaker_endpoint_url(aws::process_environment(), access->region, where);
      spec.options.sagemaker = make_sagemaker_runtime(*access, where);
    } else {
      spec.url = where;
    }
    for (const auto& other : specs) {
      if (compare && other.name == spec.name) {
        throw Error(ErrorKind::kInvalidArgument, "two endpoints are named '" + spec.name + "'");
      }
    }
    bench::make_dialect(spec.dialect, spec.options);  // validates the name early
    specs.push_back(std::move(spec));
  }
  return specs;
}

Workload workload_from(const BenchFlags& f) {
  Workload w;
  if (f.dataset.empty()) {
    w.dataset_name = "default (multilingual NLI)";
    w.samples = bench::default_dataset();
  } else {
    w.dataset_name = std::filesystem::path(f.dataset).filename().string();
    w.samples = bench::load_dataset(f.dataset);
  }
  w.pad_to_max = f.pad_to_max;
  w.max_len = f.max_len;
  if (f.pad_to_max) {
    for (auto& s : w.samples) s = bench::lengthen_sample(s, f.max_len);
  }
  w.requests = f.requests;
  w.warmup = f.warmup;
  w.batch_size = f.batch_size;
  w.concurrency = f.concurrency;
  w.arrivals = {parse_positive(f.request_rate, "--request-rate"),
                parse_positive(f.burstiness, "--burstiness")};
  if (!f.sweep_batch.empty()) w.sweep_batch = parse_list(f.sweep_batch, "--sweep-batch");
  if (!f.sweep_concurrency.empty()) {
    w.sweep_concurrency = parse_list(f.sweep_concurrency, "--sweep-concurrency");
  }
  w.task = bench::parse_task(f.task);
  w.seed = f.seed;
  if (!(f.timeout_s > 0)) throw Error(ErrorKind::kInvalidArgument, "--timeout must be > 0");
  w.timeout = std::chrono::milliseconds(static_cast<std::int64_t>(f.timeout_s * 1000));
  w.tolerance = f.tolerance;
  return w;
}

// A one-line bar redrawn in place; only when stderr is a terminal, so logs stay clean.
bench::RunProgressFn progress_bar(bool enabled) {
  if (!enabled || !::isatty(STDERR_FILENO)) return {};
  return [](const std::string& endpoint, const bench::RunSpec& spec, std::size_t done,
            std::size_t total) {
    constexpr int kWidth = 30;
    const int filled = total == 0 ? kWidth : static_cast<int>(kWidth * done / total);
    std::fprintf(stderr, "\r%s batch %zu conc %zu [%s%s] %zu/%zu", endpoint.c_str(),
                 spec.batch_size, spec.concurrency, std::string(filled, '#').c_str(),
                 std::string(kWidth - filled, '.').c_str(), done, total);
    if (done == total) std::fprintf(stderr, "\n");
    std::fflush(stderr);
  };
}

int run_bench_command(const BenchFlags& f, bool compare) {
  const auto endpoints = endpoint_specs(f, compare);
  const Workload workload = workload_from(f);
  const bench::BenchResult result =
      bench::run_bench(endpoints, workload, progress_bar(!f.no_progress));
  bench::print_tables(result, stdout);
  if (!f.output.empty()) {
    std::ofstream out(f.output);
    if (!out) throw Error(ErrorKind::kInvalidArgument, "cannot write " + f.output);
    out << bench::to_json(result).dump(2) << "\n";
  }
  // A server that answers the wrong input is not a slow server: fail the command.
  return result.mismatches() > 0 ? 3 : 0;
}

struct ReportFlags {
  std::vector<std::string> inputs;
  std::string output = "report.html";
};

CommandRegistration registration{Command{
    "bench", "Benchmark an encoder endpoint (latency, throughput, batch efficiency, accuracy)",
    [](CLI::App& sub) -> std::function<int()> {
      auto single = std::make_shared<BenchFlags>();
      auto compared = std::make_shared<BenchFlags>();
      auto report = std::make_shared<ReportFlags>();
      sub.require_subcommand(0, 1);
      CLI::App* compare_app = sub.add_subcommand(
          "compare", "Run the same workload against several endpoints and report agreement");
      CLI::App* report_app =
          sub.add_subcommand("report", "Draw results JSON files as an offline HTML report");
      add_workload_flags(*compare_app, *compared, true);
      report_app->add_option("results", report->inputs, "results JSON files")->required();
      report_app->add_option("-o,--output", report->output, "HTML file")->capture_default_str();
      // --endpoint and --sagemaker-endpoint are checked at run time: one of them is needed.
      add_workload_flags(sub, *single, false);
      return [&sub, compare_app, report_app, single, compared, report]() -> int {
        if (compare_app->parsed()) {
          if (compared->endpoints.empty() && compared->sagemaker_endpoints.empty()) {
            throw Error(ErrorKind::kInvalidArgument,
                        "bench compare needs --endpoint NAME=URL or --sagemaker-endpoint "
                        "NAME=ENDPOINT (repeat)");
          }
          return run_bench_command(*compared, true);
        }
        if (report_app->parsed()) {
          bench::write_report(report->inputs, report->output);
          std::printf("wrote %s\n", report->output.c_str());
          return 0;
        }
        if (single->endpoints.empty() && single->sagemaker_endpoints.empty()) {
          throw Error(ErrorKind::kInvalidArgument,
                      "bench needs --endpoint URL or --sagemaker-endpoint NAME");
        }
        (void)sub;
        return run_bench_command(*single, false);
      };
    }}};

}  // namespace
}  // namespace onepass::app
