// `onepass serve`: the inference server. Wires flags (each also an environment variable, so a
// container needs no command line) into a runtime::Runtime, the API dialects and the HTTP
// server, prints "listening on HOST:PORT" once bound (port 0 picks a free port), and drains on
// SIGTERM: readiness 503 at once, requests in flight complete, exit 0; a second signal exits
// at once.
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "api/api.h"
#include "apps/onepass/command.h"
#include "base/error.h"
#include "http/server.h"
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
  std::size_t max_batch_tokens = 16384;
  std::size_t max_batch_requests = 256;
  double max_wait_ms = 0;
  std::size_t max_concurrent_requests = 512;
  std::size_t max_concurrent_requests_per_model = 0;
  std::size_t max_client_batch_size = 32;
  std::size_t max_input_length = 0;
  std::size_t max_input_bytes = 0;
  bool auto_truncate = false;
  std::size_t payload_limit = 6 * 1024 * 1024;
  std::string api_key;
  bool lazy = false;
  double idle_unload_seconds = 0;
  bool enable_model_management = false;
  std::string pooling;
  std::string precision = "fp32";
  bool force_precision = false;
  double http_timeout_seconds = 30;
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

int serve(ServeFlags& flags, bool port_given) {
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
  if (flags.models.empty()) {
    if (const char* env = std::getenv("ONEPASS_MODEL")) flags.models = split_models(env);
  }
  if (flags.models.empty())
    throw Error(ErrorKind::kInvalidArgument,
                "give at least one --model [NAME=]DIR (or ONEPASS_MODEL)");
  if (flags.port < 0 || flags.port > 65535)
    throw Error(ErrorKind::kInvalidArgument, "--port must be between 0 and 65535");

  runtime::RuntimeOptions options;
  for (const auto& spec : flags.models) options.models.push_back(runtime::parse_model_spec(spec));
  options.threads = flags.threads;
  options.compute_threads = flags.compute_threads;
  options.max_batch_tokens = flags.max_batch_tokens;
  options.max_batch_requests = flags.max_batch_requests;
  options.max_wait = std::chrono::microseconds(static_cast<long long>(flags.max_wait_ms * 1000));
  options.max_concurrent_requests = flags.max_concurrent_requests;
  options.max_queued_requests_per_model = flags.max_concurrent_requests_per_model;
  options.max_input_length = flags.max_input_length;
  options.max_input_bytes = flags.max_input_bytes;
  options.auto_truncate = flags.auto_truncate;
  options.lazy = flags.lazy;
  options.idle_unload =
      std::chrono::milliseconds(static_cast<long long>(flags.idle_unload_seconds * 1000));
  if (flags.precision == "fp32")
    options.precision = model::Precision::kFp32;
  else if (flags.precision == "bf16")
    options.precision = model::Precision::kBf16;
  else if (flags.precision == "int8")
    options.precision = model::Precision::kInt8;
  else
    throw Error(ErrorKind::kInvalidArgument, "--precision must be fp32, bf16 or int8");
  options.force_precision = flags.force_precision;
  if (flags.pooling == "cls")
    options.pooling = runtime::Pooling::kCls;
  else if (flags.pooling == "mean")
    options.pooling = runtime::Pooling::kMean;
  else if (!flags.pooling.empty())
    throw Error(ErrorKind::kInvalidArgument, "--pooling must be cls or mean");
  const auto specs = options.models;
  runtime::Runtime runtime(std::move(options));

  api::ApiOptions api_options;
  api_options.api_key = flags.api_key;
  api_options.max_client_batch_size = flags.max_client_batch_size;
  api_options.enable_model_management = flags.enable_model_management;
  api_options.auto_truncate = flags.auto_truncate;
  api_options.max_batch_tokens = flags.max_batch_tokens;
  api_options.max_batch_requests = flags.max_batch_requests;
  api_options.max_concurrent_requests = flags.max_concurrent_requests;
  api_options.max_input_length = flags.max_input_length;
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
  server.run(true, [&] {
    std::fprintf(stderr, "onepass: draining: finishing the requests in flight\n");
    runtime.begin_drain();
    api.begin_drain();
  });
  if (server.in_flight() > 0) {
    // The drain deadline passed: answers can no longer be delivered, and completions still
    // queued in the runtime would reach a server being torn down.
    std::fprintf(stderr, "onepass: drain timed out with %zu requests in flight\n",
                 server.in_flight());
    std::fflush(stderr);
    std::_Exit(1);
  }
  runtime.wait_idle(std::chrono::seconds(5));
  std::fprintf(stderr, "onepass: stopped\n");
  return 0;
}

CommandRegistration registration{Command{
    "serve", "Serve models over HTTP (SageMaker/HF toolkit, TEI, KServe v2, OpenAI dialects)",
    [](CLI::App& sub) -> std::function<int()> {
      auto flags = std::make_shared<ServeFlags>();
      auto* port = sub.add_option("--port", flags->port, "TCP port (0: any free port)")
                       ->envname("ONEPASS_PORT");
      sub.add_option("--model", flags->models, "[NAME=]DIR of a Hugging Face model folder (repeat)")
          ->take_all();
      sub.add_option("--host", flags->host, "address to bind")->envname("ONEPASS_HOST");
      sub.add_option("--threads", flags->threads, "engine threads per forward pass (0: all cores)")
          ->envname("ONEPASS_THREADS");
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
      sub.add_option("--payload-limit", flags->payload_limit, "largest request body in bytes")
          ->envname("ONEPASS_PAYLOAD_LIMIT");
      sub.add_option("--api-key", flags->api_key, "require Authorization: Bearer KEY")
          ->envname("ONEPASS_API_KEY");
      sub.add_flag("--lazy", flags->lazy, "load each model on its first request")
          ->envname("ONEPASS_LAZY");
      sub.add_option("--idle-unload", flags->idle_unload_seconds,
                     "unload a model after this many idle seconds (0: never)")
          ->envname("ONEPASS_IDLE_UNLOAD");
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
      sub.add_option("--http-timeout", flags->http_timeout_seconds,
                     "seconds allowed to send a request header, a body, or read a response")
          ->envname("ONEPASS_HTTP_TIMEOUT");
      return
          [flags, port] { return serve(*flags, port->count() > 0 || std::getenv("ONEPASS_PORT")); };
    }}};

}  // namespace
}  // namespace onepass::app
