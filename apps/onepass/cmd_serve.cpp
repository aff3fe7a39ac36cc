// `onepass serve`: the inference server. Wires its settings (serve_settings.h: each a flag and
// an environment variable, so a container needs no command line) and the SageMaker / Hugging
// Face container environment (sagemaker_environment.h) into a runtime::Runtime, the API dialects
// and the HTTP server, prints "listening on HOST:PORT" once bound (port 0 picks a free port), and
// drains on SIGTERM: readiness 503 at once, requests in flight complete, exit 0; a second signal
// exits at once.
//
// A --model reference is a folder or a Hub id (org/name[@revision], docs/hub.md): Hub ids are
// downloaded into the huggingface_hub cache when the model is registered, before the port
// opens; a failed download is a failed model (/ping, /metrics, the log), as a broken folder is.
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "api/api.h"
#include "api/grpc_server/server.h"
#include "api/kserve_grpc/service.h"
#include "api/tei_grpc/service.h"
#include "apps/onepass/command.h"
#include "apps/onepass/model_reference.h"
#include "apps/onepass/sagemaker_environment.h"
#include "apps/onepass/serve_settings.h"
#include "base/error.h"
#include "base/log.h"
#include "http/server.h"
#include "hub/progress.h"
#include "hub/resolve.h"
#include "kernels/matmul.h"
#include "model/auto_precision.h"
#include "model/heads/postprocess.h"
#include "model/precision_check.h"
#include "otlp/setup.h"
#include "runtime/model_config.h"
#include "runtime/precision_verdicts.h"
#include "runtime/runtime.h"
#include "trace/tracer.h"

namespace onepass::app {
namespace {

// Hub ids resolved into the cache. Progress: a redrawn line on a terminal with text logs, else
// a download_progress log line every few seconds or 10% of a file (a JSON log stays JSON).
ModelResolver hub_resolver(const ServeSettings& settings, const hub::Environment& hub_env) {
  hub::ResolveOptions options;
  if (hub_env.progress && ::isatty(STDERR_FILENO) == 1 && settings.log_format == "text") {
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

void configure_logging(const ServeSettings& settings) {
  const auto format = log::parse_format(settings.log_format);
  if (!format)
    throw Error(ErrorKind::kInvalidArgument,
                flag_of(&ServeSettings::log_format) + " must be text or json");
  const auto level = log::parse_level(settings.log_level);
  if (!level)
    throw Error(ErrorKind::kInvalidArgument,
                flag_of(&ServeSettings::log_level) + " must be debug, info, warn, error or off");
  log::configure(*format, *level);
}

// The start-up line: what this server will do, without the API key itself.
void log_config(const ServeSettings& settings, const std::vector<runtime::ModelSpec>& specs) {
  std::string models;
  for (const auto& spec : specs) {
    if (!models.empty()) models += ',';
    models += spec.name + "=" + spec.dir.string();
    if (spec.precision) models += "#" + model::precision_mode_name(*spec.precision);
  }
  const char* spin = std::getenv("GOMP_SPINCOUNT");  // openmp_spin.h
  log::info("start", log::Fields()
                         .add("host", settings.host)
                         .add("port", settings.port)
                         .add("models", models)
                         .add("multi_model", settings.enable_model_management)
                         .add("threads", settings.threads)
                         .add("compute_threads", settings.compute_threads)
                         .add("pin_threads", settings.pin_threads)
                         .add("gomp_spincount", spin != nullptr ? spin : "libgomp default")
                         .add("precision", settings.precision)
                         .add("fp32_kernel", kernels::fp32_linear_kernel())
                         .add("max_batch_tokens", settings.max_batch_tokens)
                         .add("max_concurrent_requests", settings.max_concurrent_requests)
                         .add("payload_limit_bytes", settings.payload_limit_bytes)
                         .add("http_timeout_s", settings.http_timeout_seconds)
                         .add("lazy", settings.lazy)
                         .add("load_timeout_s", settings.load_timeout_seconds)
                         .add("auth", settings.api_key.empty() ? "none" : "api_key")
                         .add("log_format", settings.log_format));
}

// The checks no other layer makes, each naming its flag.
void check_settings(const ServeSettings& settings) {
  if (settings.port < 0 || settings.port > 65535)
    throw Error(ErrorKind::kInvalidArgument,
                flag_of(&ServeSettings::port) + " must be between 0 and 65535");
  if (settings.grpc_port < -1 || settings.grpc_port > 65535)
    throw Error(ErrorKind::kInvalidArgument,
                flag_of(&ServeSettings::grpc_port) + " must be between 0 and 65535, or -1 (off)");
  if (!(settings.max_batch_turn_ms >= 0 && settings.max_batch_turn_ms <= 3600000))
    throw Error(ErrorKind::kInvalidArgument,
                flag_of(&ServeSettings::max_batch_turn_ms) + " must be between 0 and 3600000");
}

// The drain's last step: the spans still queued, sent within this much time.
constexpr std::chrono::seconds kTraceFlushDeadline{5};

// The tracer when an OTLP endpoint is configured (--otlp-endpoint or OTEL_*), installed for the
// hooks in src/api and src/runtime; null otherwise, and then no hook records anything.
std::unique_ptr<trace::Tracer> start_tracing(const ServeSettings& settings) {
  otlp::TracingSummary summary;
  auto tracer =
      otlp::tracer_from_environment(settings.otlp_endpoint, otlp::process_environment(), &summary);
  if (!tracer) return nullptr;
  trace::install(tracer.get());
  log::info("tracing", log::Fields()
                           .add("endpoint", summary.endpoint)
                           .add("protocol", summary.protocol)
                           .add("sampler", summary.sampler)
                           .add("ratio", summary.ratio));
  return tracer;
}

runtime::LongInput parse_long_input(const ServeSettings& settings) {
  if (settings.long_input == "reject") return runtime::LongInput::kReject;
  if (settings.long_input == "chunk") return runtime::LongInput::kChunk;
  throw Error(ErrorKind::kInvalidArgument,
              flag_of(&ServeSettings::long_input) + " must be reject or chunk");
}

// Each --model as the runtime registers it; a bad one is refused naming the flag.
std::vector<runtime::ModelSpec> model_specs(const ServeSettings& settings) {
  std::vector<runtime::ModelSpec> specs;
  for (const auto& spec : settings.models) {
    // "org/name@v1" alone is named "name", as a folder is named after itself; a "#precision"
    // after it is no part of the name.
    const bool named = spec.find('=') != std::string::npos;
    try {
      specs.push_back(runtime::parse_model_spec(
          named ? spec : hub::default_model_name(spec.substr(0, spec.rfind('#'))) + "=" + spec));
    } catch (const Error& e) {
      throw Error(e.kind(), flag_of(&ServeSettings::models) + " " + spec + ": " + e.what());
    }
  }
  return specs;
}

// --state-dir (else `onepass` beside the hub cache) and --precision-check-data, read now so that
// a bad file stops the start (exit 2) before any model loads.
runtime::AutoPrecisionOptions auto_precision_options(const ServeSettings& settings,
                                                     const hub::Environment& hub_env) {
  runtime::AutoPrecisionOptions options;
  options.state_dir = precision_state_dir(settings.state_dir, hub_env.cache_dir);
  if (!settings.precision_check_data.empty()) {
    try {
      options.check_data = runtime::read_check_data(settings.precision_check_data);
      options.check_data_sha256 = runtime::file_sha256_hex(settings.precision_check_data);
    } catch (const Error& e) {
      throw Error(ErrorKind::kInvalidArgument,
                  flag_of(&ServeSettings::precision_check_data) + ": " + e.what());
    }
  }
  return options;
}

runtime::RuntimeOptions runtime_options(const ServeSettings& settings) {
  runtime::RuntimeOptions options;
  options.models = model_specs(settings);
  options.loaders.resolve = hub_resolver(settings, hub_environment());
  options.threads = settings.threads;
  options.compute_threads = settings.compute_threads;
  options.pin_threads = settings.pin_threads;
  options.max_batch_tokens = settings.max_batch_tokens;
  options.max_batch_requests = settings.max_batch_requests;
  options.max_wait = std::chrono::microseconds(static_cast<long long>(settings.max_wait_ms * 1000));
  options.max_batch_turn =
      std::chrono::milliseconds(static_cast<long long>(settings.max_batch_turn_ms));
  options.max_concurrent_requests = settings.max_concurrent_requests;
  options.max_queued_requests_per_model = settings.max_concurrent_requests_per_model;
  options.max_input_length = settings.max_input_length;
  options.max_input_bytes = settings.max_input_bytes;
  options.auto_truncate = settings.auto_truncate;
  options.max_windows_per_request = settings.max_client_batch_size;
  options.lazy = settings.lazy;
  options.idle_unload =
      std::chrono::milliseconds(static_cast<long long>(settings.idle_unload_seconds * 1000));
  options.load_timeout =
      std::chrono::milliseconds(static_cast<long long>(settings.load_timeout_seconds * 1000));
  const model::PrecisionMode precision = model::precision_mode_from_name(settings.precision);
  options.auto_precision = precision.automatic;
  options.precision = precision.fixed;
  model::require_cpu_support(options.precision);  // before any model loads or port opens
  for (const auto& spec : options.models) {
    if (spec.precision && !spec.precision->automatic)
      model::require_cpu_support(spec.precision->fixed);
  }
  options.force_precision = settings.force_precision;
  options.auto_precision_options = auto_precision_options(settings, hub_environment());
  if (!settings.pooling.empty()) {
    options.pooling = model::heads::pooling_from_name(settings.pooling);
    if (!options.pooling)
      throw Error(ErrorKind::kInvalidArgument,
                  flag_of(&ServeSettings::pooling) + " must be cls or mean");
  }
  options.default_prompt_name = settings.default_prompt_name;
  options.default_prompt = settings.default_prompt;
  return options;
}

api::ApiOptions api_options(const ServeSettings& settings, runtime::LongInput long_input) {
  api::ApiOptions options;
  options.api_key = settings.api_key;
  options.max_client_batch_size = settings.max_client_batch_size;
  options.enable_model_management = settings.enable_model_management;
  options.auto_truncate = settings.auto_truncate;
  options.long_input = long_input;
  // What TEI's /info reports; the runtime enforces them.
  options.max_batch_tokens = settings.max_batch_tokens;
  options.max_batch_requests = settings.max_batch_requests;
  options.max_concurrent_requests = settings.max_concurrent_requests;
  options.max_input_length = settings.max_input_length;
  options.hf_task = hf_task();
  return options;
}

http::ServerOptions server_options(const ServeSettings& settings) {
  http::ServerOptions options;
  options.host = settings.host;
  options.port = static_cast<std::uint16_t>(settings.port);
  options.io_threads =
      settings.io_threads > 0
          ? settings.io_threads
          : static_cast<int>(std::min(4u, std::max(1u, std::thread::hardware_concurrency())));
  options.payload_limit_bytes = settings.payload_limit_bytes;
  const auto timeout =
      std::chrono::milliseconds(static_cast<long long>(settings.http_timeout_seconds * 1000));
  options.header_timeout = options.body_timeout = options.write_timeout = timeout;
  return options;
}

int serve(ServeSettings& settings) {
  configure_logging(settings);
  apply_sagemaker_environment(settings);
  // Built on first use, as the runtime's is: only a Hub id chosen from HF_MODEL_ID needs it.
  choose_default_models(settings, [&settings](const std::string& reference) {
    return hub_resolver(settings, hub_environment())(reference);
  });
  check_settings(settings);
  const runtime::LongInput long_input = parse_long_input(settings);

  runtime::RuntimeOptions options = runtime_options(settings);
  const auto specs = options.models;
  log_config(settings, specs);
  check_runtime_settings(settings);
  // Before the runtime, so that it outlives every thread that records spans.
  std::unique_ptr<trace::Tracer> tracer = start_tracing(settings);
  runtime::Runtime runtime(std::move(options));

  api::Api api(runtime, api_options(settings, long_input));
  for (const auto& spec : specs) api.model_urls().set(spec.name, spec.dir.string());

  const http::ServerOptions http_options = server_options(settings);
  http::Server server(
      http_options,
      [&api](http::Request request, http::Respond respond) {
        api.handle(std::move(request), std::move(respond));
      },
      [&api](int status, std::string_view target, std::string_view message) {
        return api.transport_error(status, target, message);
      });
  server.listen();
  // gRPC beside HTTP (--grpc-port): the same service, API key and limits.
  std::unique_ptr<api::grpc_server::GrpcServer> grpc_server;
  if (settings.grpc_port >= 0) {
    grpc_server = std::make_unique<api::grpc_server::GrpcServer>(
        runtime, api.options(), api.model_urls(),
        api::grpc_server::GrpcOptions{settings.host, settings.grpc_port,
                                      settings.payload_limit_bytes, http_options.io_threads});
    grpc_server->add(api::kserve_grpc::service(grpc_server->context()));
    for (auto& table : api::tei_grpc::services(grpc_server->context()))
      grpc_server->add(std::move(table));
    grpc_server->start();
    std::printf("grpc listening on %s\n", grpc_server->address().c_str());
    log::info("listening",
              log::Fields().add("address", grpc_server->address()).add("protocol", "grpc"));
  }
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
    if (grpc_server) grpc_server->begin_drain();
  });
  // HTTP has drained; gRPC calls still in flight finish (new ones were refused since the drain
  // began), within the same grace the runtime gets below.
  if (grpc_server) grpc_server->shutdown(std::chrono::seconds(5));
  if (server.in_flight() > 0) {
    // The drain deadline passed: answers can no longer be delivered, and completions still
    // queued in the runtime would reach a server being torn down.
    log::error("drain", log::Fields().add("phase", "timeout").add("in_flight", server.in_flight()));
    std::fflush(stderr);
    std::_Exit(1);
  }
  runtime.wait_idle(std::chrono::seconds(5));
  if (tracer) {
    // What is queued goes to the collector now, within its own short deadline. An export still
    // waiting on a slow collector then is not waited for: the tracer is left to the exit.
    const bool flushed = tracer->shutdown(std::chrono::steady_clock::now() + kTraceFlushDeadline);
    log::info("drain", log::Fields().add("phase", "traces").add("flushed", flushed));
    if (!flushed) static_cast<void>(tracer.release());
  }
  log::info("drain", log::Fields()
                         .add("phase", "done")
                         .add_ms("duration_ms", std::chrono::steady_clock::now() - drain_start));
  log::info("stopped");
  return 0;
}

CommandRegistration registration{Command{
    "serve", "Serve models over HTTP (SageMaker/HF toolkit, TEI, KServe v2, OpenAI dialects)",
    [](CLI::App& sub) -> std::function<int()> {
      auto settings = std::make_shared<ServeSettings>();
      auto finish_parse = add_serve_options(sub, *settings);
      return [settings, finish_parse] {
        finish_parse();
        return serve(*settings);
      };
    }}};

}  // namespace
}  // namespace onepass::app
