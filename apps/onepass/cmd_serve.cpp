// `onepass serve`: the inference server. Wires flags (each also an environment variable, so a
// container needs no command line) into a runtime::Runtime, the API dialects and the HTTP
// server, prints "listening on HOST:PORT" once bound (port 0 picks a free port), and drains on
// SIGTERM: readiness 503 at once, requests in flight complete, exit 0; a second signal exits
// at once.
//
// A --model reference is a folder or a Hub id (org/name[@revision], docs/hub.md): Hub ids are
// downloaded into the huggingface_hub cache when the model is registered, before the port
// opens; a failed download is a failed model (/ping, /metrics, the log), as a broken folder is.
//
// The SageMaker container contract (docs/deploy.md): started as `IMAGE serve` with no --model,
// it serves /opt/ml/model when that folder holds a model, else HF_MODEL_ID (+ HF_MODEL_REVISION,
// HF_TOKEN or HF_API_TOKEN) from the Hub as the Hugging Face inference toolkit does, HF_TASK
// checked against the model's task; or it starts empty with the multi-model routes when
// SAGEMAKER_MULTI_MODEL=true; SAGEMAKER_BIND_TO_PORT, SAGEMAKER_SAFE_PORT_RANGE,
// SAGEMAKER_MAX_PAYLOAD_IN_MB and SAGEMAKER_MODEL_SERVER_TIMEOUT set what their names say;
// SAGEMAKER_MODEL_SERVER_WORKERS is accepted and ignored (one process batches every request).
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "api/api.h"
#include "apps/onepass/command.h"
#include "apps/onepass/hf_task.h"
#include "base/error.h"
#include "base/log.h"
#include "http/server.h"
#include "hub/progress.h"
#include "hub/resolve.h"
#include "kernels/matmul.h"
#include "model/precision_check.h"
#include "runtime/model_config.h"
#include "runtime/runtime.h"

namespace onepass::app {
namespace {

struct ServeFlags {
  std::vector<std::string> models;
  std::string host = "127.0.0.1";
  int port = 8080;
  int threads = 0;
  int io_threads = 0;
  int compute_threads = 1;
  bool pin_threads = true;
  std::size_t max_batch_tokens = 16384;
  std::size_t max_batch_requests = 256;
  double max_wait_ms = 0;
  double max_batch_turn_ms = 100;
  std::size_t max_concurrent_requests = 512;
  std::size_t max_concurrent_requests_per_model = 0;
  std::size_t max_client_batch_size = 32;
  std::size_t max_input_length = 0;
  std::size_t max_input_bytes = 0;
  bool auto_truncate = false;
  std::string long_input = "reject";
  std::size_t payload_limit = 6 * 1024 * 1024;
  std::string api_key;
  bool lazy = false;
  double idle_unload_seconds = 0;
  double load_timeout_seconds = 300;
  bool enable_model_management = false;
  std::string pooling;
  // Given or not: an empty --default-prompt is a choice (no prompt, whatever the folder says).
  std::optional<std::string> default_prompt_name;
  std::optional<std::string> default_prompt;
  std::string precision = "fp32";
  bool force_precision = false;
  double http_timeout_seconds = 30;
  std::string log_format = "text";
  std::string log_level = "info";
  std::string sagemaker_model_dir = "/opt/ml/model";  // tests point it elsewhere
};

std::vector<std::string> split_models(const std::string& list) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start <= list.size()) {
    const auto comma = list.find(',', start);
    const auto item = list.substr(start, comma == std::string::npos ? list.npos : comma - start);
    if (!item.empty()) out.push_back(item);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return out;
}

const char* env(const char* name) {
  const char* value = std::getenv(name);
  return value && *value ? value : nullptr;
}

bool env_true(const char* name) {
  const char* value = env(name);
  if (!value) return false;
  const std::string v(value);
  return v == "true" || v == "TRUE" || v == "True" || v == "1" || v == "yes";
}

double env_number(const char* name) {
  const char* value = env(name);
  try {
    std::size_t used = 0;
    const double number = std::stod(value, &used);
    if (used != std::string(value).size() || !(number > 0)) throw std::invalid_argument(name);
    return number;
  } catch (...) {
    throw Error(ErrorKind::kInvalidArgument,
                std::string(name) + " must be a positive number (got '" + value + "')");
  }
}

// A folder that holds a Hugging Face model: config.json next to the weights.
bool holds_model(const std::filesystem::path& dir) {
  std::error_code ec;
  return std::filesystem::is_regular_file(dir / "config.json", ec);
}

// SageMaker's variables, applied where the matching onepass flag was not given.
void apply_sagemaker_environment(ServeFlags& flags, bool payload_given, bool timeout_given) {
  if (env("SAGEMAKER_MAX_PAYLOAD_IN_MB") && !payload_given)
    flags.payload_limit =
        static_cast<std::size_t>(env_number("SAGEMAKER_MAX_PAYLOAD_IN_MB") * 1024 * 1024);
  if (env("SAGEMAKER_MODEL_SERVER_TIMEOUT") && !timeout_given)
    flags.http_timeout_seconds = env_number("SAGEMAKER_MODEL_SERVER_TIMEOUT");
  if (const char* workers = env("SAGEMAKER_MODEL_SERVER_WORKERS"))
    log::info("config_ignored", log::Fields()
                                    .add("variable", "SAGEMAKER_MODEL_SERVER_WORKERS")
                                    .add("value", workers)
                                    .add("reason",
                                         "one onepass process batches across all "
                                         "requests; extra workers would only split "
                                         "the batches and multiply the weights"));
  if (const char* range = env("SAGEMAKER_SAFE_PORT_RANGE")) {
    // "LOW-HIGH": the ports SageMaker leaves to the container; ours must be inside.
    int low = 0, high = 0;
    char tail = 0;
    if (std::sscanf(range, "%d-%d%c", &low, &high, &tail) != 2 || low > high)
      throw Error(ErrorKind::kInvalidArgument,
                  std::string("SAGEMAKER_SAFE_PORT_RANGE must be LOW-HIGH (got '") + range + "')");
    if (flags.port != 0 && (flags.port < low || flags.port > high))
      throw Error(
          ErrorKind::kInvalidArgument,
          "port " + std::to_string(flags.port) + " is outside SAGEMAKER_SAFE_PORT_RANGE " + range);
  }
}

// The Hub as `serve` reaches it: the process's HF_* variables, HF_API_TOKEN (the inference
// toolkit's name) when HF_TOKEN is not set.
hub::Environment hub_environment() {
  hub::Environment out = hub::Environment::from_process();
  if (!env("HF_TOKEN")) {
    if (const char* token = env("HF_API_TOKEN")) out.token = token;
  }
  return out;
}

// Hub ids resolved into the cache. Progress: a redrawn line on a terminal with text logs, else
// a download_progress log line every few seconds or 10% of a file (a JSON log stays JSON).
std::function<std::filesystem::path(const std::string&)> hub_resolver(
    const ServeFlags& flags, const hub::Environment& hub_env) {
  hub::ResolveOptions options;
  if (hub_env.progress && ::isatty(STDERR_FILENO) == 1 && flags.log_format == "text") {
    options.progress = hub::stderr_progress(true);
  } else if (hub_env.progress) {
    auto progress = std::make_shared<hub::DownloadProgress>(
        hub::DownloadProgress::Style::kLines, [](const hub::ProgressReport& r) {
          log::info("download_progress", log::Fields()
                                             .add("file", r.file)
                                             .add("bytes", r.bytes)
                                             .add("total_bytes", r.total)
                                             .add("bytes_per_second", r.bytes_per_second)
                                             .add("eta_s", r.eta_seconds)
                                             .add("done", r.done));
        });
    options.progress = [progress](const std::string& file, std::uint64_t bytes,
                                  std::uint64_t total) { (*progress)(file, bytes, total); };
  }
  return [hub_env, options](const std::string& reference) {
    return hub::resolve_model(reference, hub_env, options);
  };
}

// HF_MODEL_ID as the inference toolkit reads it: downloaded now, so that a wrong id, revision,
// token or HF_TASK stops the container with exit 2 and a message naming the problem.
std::string hf_model_folder(const ServeFlags& flags, const char* model_id) {
  std::string reference = model_id;
  if (const char* revision = env("HF_MODEL_REVISION")) reference += std::string("@") + revision;
  const auto resolve = hub_resolver(flags, hub_environment());
  return resolve(reference).string();
}

// HF_TASK, when set, must be what the default model serves.
void check_default_task(const std::string& dir) {
  const char* task = env("HF_TASK");
  if (!task) return;
  check_hf_task(task, runtime::describe_model_folder("model", dir));
}

// With no --model: the SageMaker defaults, in the order SageMaker's toolkits try them.
void choose_default_models(ServeFlags& flags) {
  if (!flags.models.empty()) return;
  if (const char* list = env("ONEPASS_MODEL")) {
    flags.models = split_models(list);
    return;
  }
  if (env_true("SAGEMAKER_MULTI_MODEL")) {
    // Multi-model endpoint: start empty; SageMaker loads each model from /opt/ml/models/...
    // through POST /models.
    flags.enable_model_management = true;
    return;
  }
  if (holds_model(flags.sagemaker_model_dir)) {
    check_default_task(flags.sagemaker_model_dir);
    flags.models.push_back("model=" + flags.sagemaker_model_dir);
    return;
  }
  if (const char* model_id = env("HF_MODEL_ID")) {
    const std::string dir = hf_model_folder(flags, model_id);
    check_default_task(dir);
    flags.models.push_back("model=" + dir);
    return;
  }
  throw Error(ErrorKind::kInvalidArgument,
              "give at least one --model [NAME=]DIR|ORG/NAME[@REV] (or ONEPASS_MODEL), put a "
              "model in " +
                  flags.sagemaker_model_dir +
                  ", set HF_MODEL_ID to a Hub id, or set SAGEMAKER_MULTI_MODEL=true");
}

void configure_logging(const ServeFlags& flags) {
  const auto format = log::parse_format(flags.log_format);
  if (!format) throw Error(ErrorKind::kInvalidArgument, "--log-format must be text or json");
  const auto level = log::parse_level(flags.log_level);
  if (!level)
    throw Error(ErrorKind::kInvalidArgument, "--log-level must be debug, info, warn, error or off");
  log::configure(*format, *level);
}

// The start-up line: what this server will do, without the API key itself.
void log_config(const ServeFlags& flags, const std::vector<runtime::ModelSpec>& specs) {
  std::string models;
  for (const auto& spec : specs) {
    if (!models.empty()) models += ',';
    models += spec.name + "=" + spec.dir.string();
  }
  const char* spin = std::getenv("GOMP_SPINCOUNT");  // openmp_spin.h
  log::info("start", log::Fields()
                         .add("host", flags.host)
                         .add("port", flags.port)
                         .add("models", models)
                         .add("multi_model", flags.enable_model_management)
                         .add("threads", flags.threads)
                         .add("compute_threads", flags.compute_threads)
                         .add("pin_threads", flags.pin_threads)
                         .add("gomp_spincount", spin != nullptr ? spin : "libgomp default")
                         .add("precision", flags.precision)
                         .add("fp32_kernel", kernels::fp32_linear_kernel())
                         .add("max_batch_tokens", flags.max_batch_tokens)
                         .add("max_concurrent_requests", flags.max_concurrent_requests)
                         .add("payload_limit_bytes", flags.payload_limit)
                         .add("http_timeout_s", flags.http_timeout_seconds)
                         .add("lazy", flags.lazy)
                         .add("load_timeout_s", flags.load_timeout_seconds)
                         .add("auth", flags.api_key.empty() ? "none" : "api_key")
                         .add("log_format", flags.log_format));
}

runtime::LongInput parse_long_input_flag(const std::string& value) {
  if (value == "reject") return runtime::LongInput::kReject;
  if (value == "chunk") return runtime::LongInput::kChunk;
  throw Error(ErrorKind::kInvalidArgument, "--long-input must be reject or chunk");
}

int serve(ServeFlags& flags, bool port_given, bool payload_given, bool timeout_given) {
  configure_logging(flags);
  // SageMaker tells the container its port this way.
  if (!port_given) {
    if (const char* sagemaker_port = std::getenv("SAGEMAKER_BIND_TO_PORT")) {
      try {
        flags.port = std::stoi(sagemaker_port);
      } catch (...) {
        throw Error(ErrorKind::kInvalidArgument, "SAGEMAKER_BIND_TO_PORT is not a port number");
      }
    }
  }
  apply_sagemaker_environment(flags, payload_given, timeout_given);
  choose_default_models(flags);
  if (flags.port < 0 || flags.port > 65535)
    throw Error(ErrorKind::kInvalidArgument, "--port must be between 0 and 65535");
  if (!(flags.max_batch_turn_ms >= 0 && flags.max_batch_turn_ms <= 3600000))
    throw Error(ErrorKind::kInvalidArgument, "--max-batch-turn-ms must be between 0 and 3600000");
  const runtime::LongInput long_input = parse_long_input_flag(flags.long_input);

  runtime::RuntimeOptions options;
  for (const auto& spec : flags.models) {
    // "org/name@v1" alone is named "name", as a folder is named after itself.
    const bool named = spec.find('=') != std::string::npos;
    options.models.push_back(
        runtime::parse_model_spec(named ? spec : hub::default_model_name(spec) + "=" + spec));
  }
  options.loaders.resolve = hub_resolver(flags, hub_environment());
  options.threads = flags.threads;
  options.compute_threads = flags.compute_threads;
  options.pin_threads = flags.pin_threads;
  options.max_batch_tokens = flags.max_batch_tokens;
  options.max_batch_requests = flags.max_batch_requests;
  options.max_wait = std::chrono::microseconds(static_cast<long long>(flags.max_wait_ms * 1000));
  options.max_batch_turn =
      std::chrono::milliseconds(static_cast<long long>(flags.max_batch_turn_ms));
  options.max_concurrent_requests = flags.max_concurrent_requests;
  options.max_queued_requests_per_model = flags.max_concurrent_requests_per_model;
  options.max_input_length = flags.max_input_length;
  options.max_input_bytes = flags.max_input_bytes;
  options.auto_truncate = flags.auto_truncate;
  options.max_windows_per_request = flags.max_client_batch_size;
  options.lazy = flags.lazy;
  options.idle_unload =
      std::chrono::milliseconds(static_cast<long long>(flags.idle_unload_seconds * 1000));
  options.load_timeout =
      std::chrono::milliseconds(static_cast<long long>(flags.load_timeout_seconds * 1000));
  options.precision = kernels::precision_from_name(flags.precision);
  model::require_cpu_support(options.precision);  // before any model loads or port opens
  options.force_precision = flags.force_precision;
  if (flags.pooling == "cls")
    options.pooling = runtime::Pooling::kCls;
  else if (flags.pooling == "mean")
    options.pooling = runtime::Pooling::kMean;
  else if (!flags.pooling.empty())
    throw Error(ErrorKind::kInvalidArgument, "--pooling must be cls or mean");
  options.default_prompt_name = flags.default_prompt_name;
  options.default_prompt = flags.default_prompt;
  const auto specs = options.models;
  log_config(flags, specs);
  runtime::Runtime runtime(std::move(options));

  api::ApiOptions api_options;
  api_options.api_key = flags.api_key;
  api_options.max_client_batch_size = flags.max_client_batch_size;
  api_options.enable_model_management = flags.enable_model_management;
  api_options.auto_truncate = flags.auto_truncate;
  api_options.long_input = long_input;
  api_options.max_batch_tokens = flags.max_batch_tokens;
  api_options.max_batch_requests = flags.max_batch_requests;
  api_options.max_concurrent_requests = flags.max_concurrent_requests;
  api_options.max_input_length = flags.max_input_length;
  if (const char* task = env("HF_TASK")) api_options.hf_task = task;
  api::Api api(runtime, api_options);
  for (const auto& spec : specs) api.model_urls().set(spec.name, spec.dir.string());

  http::ServerOptions server_options;
  server_options.host = flags.host;
  server_options.port = static_cast<std::uint16_t>(flags.port);
  server_options.io_threads =
      flags.io_threads > 0
          ? flags.io_threads
          : static_cast<int>(std::min(4u, std::max(1u, std::thread::hardware_concurrency())));
  server_options.payload_limit_bytes = flags.payload_limit;
  const auto timeout =
      std::chrono::milliseconds(static_cast<long long>(flags.http_timeout_seconds * 1000));
  server_options.header_timeout = server_options.body_timeout = server_options.write_timeout =
      timeout;
  http::Server server(
      server_options,
      [&api](http::Request request, http::Respond respond) {
        api.handle(std::move(request), std::move(respond));
      },
      [&api](int status, std::string_view target, std::string_view message) {
        return api.transport_error(status, target, message);
      });
  server.listen();
  std::printf("listening on %s\n", server.address().c_str());
  std::fflush(stdout);
  log::info("listening", log::Fields().add("address", server.address()));
  std::chrono::steady_clock::time_point drain_start;
  server.run(true, [&] {
    drain_start = std::chrono::steady_clock::now();
    log::info("drain", log::Fields()
                           .add("phase", "begin")
                           .add("in_flight", server.in_flight())
                           .add("open_connections", server.open_connections()));
    runtime.begin_drain();
    api.begin_drain();
  });
  if (server.in_flight() > 0) {
    // The drain deadline passed: answers can no longer be delivered, and completions still
    // queued in the runtime would reach a server being torn down.
    log::error("drain", log::Fields().add("phase", "timeout").add("in_flight", server.in_flight()));
    std::fflush(stderr);
    std::_Exit(1);
  }
  runtime.wait_idle(std::chrono::seconds(5));
  log::info("drain", log::Fields()
                         .add("phase", "done")
                         .add_ms("duration_ms", std::chrono::steady_clock::now() - drain_start));
  log::info("stopped");
  return 0;
}

CommandRegistration registration{Command{
    "serve", "Serve models over HTTP (SageMaker/HF toolkit, TEI, KServe v2, OpenAI dialects)",
    [](CLI::App& sub) -> std::function<int()> {
      auto flags = std::make_shared<ServeFlags>();
      auto* port = sub.add_option("--port", flags->port, "TCP port (0: any free port)")
                       ->envname("ONEPASS_PORT");
      sub.add_option("--model", flags->models,
                     "[NAME=]REF: a model folder or a Hub id org/name[@revision] (repeat)")
          ->take_all();
      sub.add_option("--host", flags->host, "address to bind")->envname("ONEPASS_HOST");
      sub.add_option("--threads", flags->threads,
                     "engine threads per forward pass (0: the cores divided among the compute "
                     "threads)")
          ->envname("ONEPASS_THREADS");
      sub.add_option("--pin-threads", flags->pin_threads,
                     "pin each forward pass's threads to cores of their own (true|false); "
                     "avoids a stall after idle gaps (docs/performance.md, Traffic with gaps)")
          ->envname("ONEPASS_PIN_THREADS");
      sub.add_option("--io-threads", flags->io_threads, "HTTP I/O threads (0: up to 4)")
          ->envname("ONEPASS_IO_THREADS");
      sub.add_option("--compute-threads", flags->compute_threads, "threads running forward passes")
          ->envname("ONEPASS_COMPUTE_THREADS");
      sub.add_option("--max-batch-tokens", flags->max_batch_tokens, "token budget of one batch")
          ->envname("ONEPASS_MAX_BATCH_TOKENS");
      sub.add_option("--max-batch-requests", flags->max_batch_requests, "inputs in one batch")
          ->envname("ONEPASS_MAX_BATCH_REQUESTS");
      sub.add_option("--max-wait-ms", flags->max_wait_ms, "wait this long to fill a batch")
          ->envname("ONEPASS_MAX_WAIT_MS");
      sub.add_option("--max-batch-turn-ms", flags->max_batch_turn_ms,
                     "with several models busy, cut one batch to about this much compute (0: off)")
          ->envname("ONEPASS_MAX_BATCH_TURN_MS");
      sub.add_option("--max-concurrent-requests", flags->max_concurrent_requests,
                     "requests in flight before 429")
          ->envname("ONEPASS_MAX_CONCURRENT_REQUESTS");
      sub.add_option("--max-concurrent-requests-per-model",
                     flags->max_concurrent_requests_per_model,
                     "requests in flight for one model before 429, so that a flooded model leaves "
                     "room for the others (0: --max-concurrent-requests)")
          ->envname("ONEPASS_MAX_CONCURRENT_REQUESTS_PER_MODEL");
      sub.add_option("--max-client-batch-size", flags->max_client_batch_size,
                     "inputs in one request")
          ->envname("ONEPASS_MAX_CLIENT_BATCH_SIZE");
      sub.add_option("--max-input-length", flags->max_input_length,
                     "tokens per input (0: the model's limit)")
          ->envname("ONEPASS_MAX_INPUT_LENGTH");
      sub.add_option("--max-input-bytes", flags->max_input_bytes,
                     "bytes per text, refused before tokenizing even with truncation (0: 64 per "
                     "token of the model's input length, at least 64 KiB)")
          ->envname("ONEPASS_MAX_INPUT_BYTES");
      sub.add_flag("--auto-truncate", flags->auto_truncate, "truncate over-long inputs")
          ->envname("ONEPASS_AUTO_TRUNCATE");
      sub.add_option("--long-input", flags->long_input,
                     "over-long inputs when the request does not say: reject (422) or chunk "
                     "(windows, combined)")
          ->envname("ONEPASS_LONG_INPUT");
      auto* payload =
          sub.add_option("--payload-limit", flags->payload_limit, "largest request body in bytes")
              ->envname("ONEPASS_PAYLOAD_LIMIT");
      sub.add_option("--api-key", flags->api_key, "require Authorization: Bearer KEY")
          ->envname("ONEPASS_API_KEY");
      sub.add_flag("--lazy", flags->lazy, "load each model on its first request")
          ->envname("ONEPASS_LAZY");
      sub.add_option("--idle-unload", flags->idle_unload_seconds,
                     "unload a model after this many idle seconds (0: never)")
          ->envname("ONEPASS_IDLE_UNLOAD");
      sub.add_option("--load-timeout", flags->load_timeout_seconds,
                     "fail a model load that takes longer than this many seconds (0: never)")
          ->envname("ONEPASS_LOAD_TIMEOUT");
      sub.add_flag("--enable-model-management", flags->enable_model_management,
                   "SageMaker multi-model routes (POST/DELETE /models)")
          ->envname("ONEPASS_ENABLE_MODEL_MANAGEMENT");
      sub.add_option("--precision", flags->precision,
                     "fp32, bf16 or int8 matrix products (bf16/int8 must pass the accuracy gate)")
          ->envname("ONEPASS_PRECISION");
      sub.add_flag("--force-precision", flags->force_precision,
                   "serve bf16/int8 even when the accuracy gate at load fails")
          ->envname("ONEPASS_FORCE_PRECISION");
      sub.add_option("--pooling", flags->pooling, "embedders: cls or mean")
          ->envname("ONEPASS_POOLING");
      // Strings bound here, made optional in the callback: CLI11 2.1 has no std::optional.
      auto prompt_name_text = std::make_shared<std::string>();
      auto prompt_text = std::make_shared<std::string>();
      auto* prompt_name =
          sub.add_option("--default-prompt-name", *prompt_name_text,
                         "embedders: the prompt (config_sentence_transformers.json) put before "
                         "a text whose request names none")
              ->envname("ONEPASS_DEFAULT_PROMPT_NAME");
      auto* prompt = sub.add_option("--default-prompt", *prompt_text,
                                    "embedders: text put before a text whose request names no "
                                    "prompt (\"\": none, whatever the folder says)")
                         ->envname("ONEPASS_DEFAULT_PROMPT");
      prompt->excludes(prompt_name);
      auto* timeout =
          sub.add_option("--http-timeout", flags->http_timeout_seconds,
                         "seconds allowed to send a request header, a body, or read a response")
              ->envname("ONEPASS_HTTP_TIMEOUT");
      sub.add_option("--log-format", flags->log_format, "text or json (one object per line)")
          ->envname("ONEPASS_LOG_FORMAT");
      sub.add_option("--log-level", flags->log_level, "debug, info, warn, error or off")
          ->envname("ONEPASS_LOG_LEVEL");
      sub.add_option("--sagemaker-model-dir", flags->sagemaker_model_dir,
                     "the model folder served when no --model is given")
          ->envname("ONEPASS_SAGEMAKER_MODEL_DIR");
      return [flags, port, payload, timeout, prompt_name, prompt, prompt_name_text, prompt_text] {
        if (prompt_name->count() > 0 || std::getenv("ONEPASS_DEFAULT_PROMPT_NAME"))
          flags->default_prompt_name = *prompt_name_text;
        if (prompt->count() > 0 || std::getenv("ONEPASS_DEFAULT_PROMPT"))
          flags->default_prompt = *prompt_text;
        return serve(*flags, port->count() > 0 || std::getenv("ONEPASS_PORT"),
                     payload->count() > 0 || std::getenv("ONEPASS_PAYLOAD_LIMIT"),
                     timeout->count() > 0 || std::getenv("ONEPASS_HTTP_TIMEOUT"));
      };
    }}};

}  // namespace
}  // namespace onepass::app
