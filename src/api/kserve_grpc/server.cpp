#include "api/kserve_grpc/server.h"

#include <grpcpp/generic/async_generic_service.h>
#include <grpcpp/security/server_credentials.h>
#include <grpcpp/server.h>
#include <grpcpp/server_builder.h>
#include <grpcpp/support/byte_buffer.h>

#include <atomic>
#include <cmath>
#include <filesystem>
#include <functional>
#include <optional>
#include <string_view>

#include "api/common/api_error.h"
#include "api/common/api_key.h"
#include "api/common/model_select.h"
#include "api/kserve_grpc/messages.h"
#include "api/kserve_grpc/status.h"
#include "base/error.h"
#include "base/log.h"
#include "runtime/model_name.h"
#include "trace/tracer.h"

namespace onepass::api::kserve_grpc {

namespace {

constexpr const char* kVersion = "1";  // the one version of each model, as REST's metadata says

// Which calls skip the API key and answer while draining (REST's open health routes).
enum class Access { kClosed, kLiveness, kReadiness };

std::string_view view(const grpc::string_ref& ref) { return {ref.data(), ref.size()}; }

const std::string* metadata(const grpc::CallbackServerContext& context, std::string_view key,
                            std::string& storage) {
  const auto& all = context.client_metadata();
  const auto it = all.find(grpc::string_ref(key.data(), key.size()));
  if (it == all.end()) return nullptr;
  storage.assign(it->second.data(), it->second.size());
  return &storage;
}

// One call's log line, request metric and server span, written when it finishes (as REST's
// Reply does): the method as its route label, the model, the status (with REST's code beside
// it, so that the request metrics stay one family), the latency, the request id and, while
// tracing (docs/tracing.md), the trace id of a span that is a child of the caller's
// `traceparent` metadata.
class CallRecord {
 public:
  CallRecord(runtime::InferenceService& service, const char* method,
             grpc::CallbackServerContext& context)
      : service_(service), method_(method), start_(std::chrono::steady_clock::now()) {
    std::string header;
    request_id_ = log::request_id_from(metadata(context, "x-request-id", header));
    context.AddInitialMetadata("x-request-id", request_id_);
    if (trace::active() != nullptr) start_trace(context);
  }
  // The call's span context: the runtime's spans of its request are its children.
  const trace::SpanContext& trace_context() const { return trace_; }
  void set_model(std::string model) { model_ = std::move(model); }
  void set_inference(std::size_t inputs, std::size_t tokens) {
    inputs_ = inputs;
    tokens_ = tokens;
  }

  void finish(const CallStatus& status) {
    const auto latency = std::chrono::steady_clock::now() - start_;
    try {
      service_.record_http_request(std::string("grpc:") + method_, model_, status.http_status,
                                   latency);
    } catch (...) {
      // Metrics must never turn an answered call into a failure.
    }
    record_span(status);
    const log::Level level = status.http_status >= 500   ? log::Level::kError
                             : status.http_status >= 400 ? log::Level::kWarn
                                                         : log::Level::kInfo;
    if (!log::enabled(level)) return;
    try {
      log::Fields fields;
      fields.add("request_id", request_id_)
          .add("method", "grpc")
          .add("route", method_)
          .add("model", model_)
          .add("status", status.http_status)
          .add("grpc_status", static_cast<int>(status.status.error_code()))
          .add_ms("latency_ms", latency);
      if (inputs_ > 0) fields.add("inputs", inputs_).add("tokens", tokens_);
      if (!status.status.ok()) fields.add("error", status.status.error_message());
      if (trace_.valid()) fields.add("trace_id", trace::to_hex(trace_.trace_id));
      log::write(level, "request", fields);
    } catch (...) {
      // Nor may a log line.
    }
  }

 private:
  void start_trace(const grpc::CallbackServerContext& context) {
    try {
      std::string header, state;
      const std::optional<trace::SpanContext> parent = trace::caller_context(
          metadata(context, "traceparent", header), metadata(context, "tracestate", state));
      trace_ = trace::active()->start(parent ? &*parent : nullptr);
      if (parent) parent_span_id_ = parent->span_id;
      parent_remote_ = parent.has_value();
    } catch (...) {
      trace_ = {};  // the call goes on untraced
    }
  }

  // OpenTelemetry's RPC conventions: "{rpc.service}/{rpc.method}", rpc.system "grpc",
  // rpc.grpc.status_code; a status REST would answer 5xx is an error.
  void record_span(const CallStatus& status) {
    try {
      trace::Tracer* tracer = trace::active();
      if (tracer == nullptr || !trace_.sampled()) return;
      trace::SpanData span = trace::span_of(
          trace_, parent_span_id_, std::string("inference.GRPCInferenceService/") + method_, start_,
          std::chrono::steady_clock::now());
      span.parent_remote = parent_remote_;
      span.kind = trace::SpanKind::kServer;
      span.set("rpc.system", "grpc")
          .set("rpc.service", "inference.GRPCInferenceService")
          .set("rpc.method", method_)
          .set("rpc.grpc.status_code", static_cast<int>(status.status.error_code()))
          .set("onepass.dialect", "kserve-grpc");
      if (!model_.empty()) span.set("gen_ai.request.model", model_);
      if (!request_id_.empty()) span.set("onepass.request_id", request_id_);
      if (inputs_ > 0)
        span.set("onepass.inputs", inputs_).set("gen_ai.usage.input_tokens", tokens_);
      if (!status.status.ok()) {
        span.set("error.type", std::to_string(static_cast<int>(status.status.error_code())));
        if (status.http_status >= 500) {
          span.status = trace::StatusCode::kError;
          span.status_message = status.status.error_message();
        } else {
          span.set("onepass.error.message", status.status.error_message());
        }
      }
      tracer->record(std::move(span));
    } catch (...) {
      // Never the answer's problem.
    }
  }

  runtime::InferenceService& service_;
  const char* method_;
  std::chrono::steady_clock::time_point start_;
  trace::SpanContext trace_;
  trace::SpanId parent_span_id_{};
  bool parent_remote_ = false;
  std::string request_id_;
  std::string model_;
  std::size_t inputs_ = 0;
  std::size_t tokens_ = 0;
};

bool past_deadline(const grpc::CallbackServerContext& context) {
  return std::chrono::system_clock::now() > context.deadline();
}

// One call of any method: reads the request message, hands it to the Service, and sends the
// one answer the Service gives (respond or fail), from whichever thread gives it.
class GenericCall final : public grpc::ServerGenericBidiReactor {
 public:
  using Handler = std::function<void(GenericCall&, std::string_view)>;

  GenericCall(grpc::GenericCallbackServerContext& context, const char* method,
              runtime::InferenceService& service, Handler handler)
      : context_(context), record_(service, method, context), handler_(std::move(handler)) {
    StartRead(&request_);
  }

  grpc::GenericCallbackServerContext& context() { return context_; }
  CallRecord& record() { return record_; }

  void respond(const std::string& message) {
    if (answered_.exchange(true)) return;
    grpc::Slice slice(message);
    response_ = grpc::ByteBuffer(&slice, 1);
    record_.finish({grpc::Status::OK, 200});
    StartWriteAndFinish(&response_, grpc::WriteOptions(), grpc::Status::OK);
  }

  void fail(const CallStatus& status) {
    if (answered_.exchange(true)) return;
    record_.finish(status);
    Finish(status.status);
  }

  void OnReadDone(bool ok) override {
    if (!ok) {
      fail({grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, "the call carried no request"), 400});
      return;
    }
    grpc::Slice slice;
    if (!request_.DumpToSingleSlice(&slice).ok()) {
      fail({grpc::Status(grpc::StatusCode::INTERNAL, "the request could not be read"), 500});
      return;
    }
    try {
      handler_(*this, std::string_view(reinterpret_cast<const char*>(slice.begin()), slice.size()));
    } catch (...) {
      fail(status_of(std::current_exception()));
    }
  }

  void OnDone() override { delete this; }

 private:
  grpc::GenericCallbackServerContext& context_;
  CallRecord record_;
  Handler handler_;
  grpc::ByteBuffer request_;
  grpc::ByteBuffer response_;
  std::atomic<bool> answered_{false};
};

}  // namespace

// Every method of inference.GRPCInferenceService, by its full name. A method answers with
// call.respond() (on this thread or, for ModelInfer and RepositoryModelLoad, on the runtime's)
// or throws, which GenericCall answers through status_of().
class GrpcServer::Service final : public grpc::CallbackGenericService {
 public:
  Service(runtime::InferenceService& service, const ApiOptions& options, ModelUrls& model_urls)
      : service_(service), options_(options), model_urls_(model_urls) {}

  void begin_drain() { draining_ = true; }

  grpc::ServerGenericBidiReactor* CreateReactor(
      grpc::GenericCallbackServerContext* context) override;

 private:
  struct Method {
    const char* name;
    Access access;
    void (Service::*handle)(GenericCall&, std::string_view);
  };
  static const Method kMethods[];

  void server_live(GenericCall& call, std::string_view) { call.respond(encode_flag(true)); }

  void server_ready(GenericCall& call, std::string_view) {
    call.respond(encode_flag(!draining_ && service_.ready()));
  }

  void model_ready(GenericCall& call, std::string_view request) {
    const ModelRef ref = decode_model_ref(request);
    // A model that failed to load is not ready: ready false, not an error.
    const auto model = select_model_in_any_state(service_, ref.name);
    call.record().set_model(model.name);
    check_version(model.name, ref.version);
    call.respond(encode_flag(model.state == runtime::ModelState::kReady));
  }

  void server_metadata(GenericCall& call, std::string_view) {
    call.respond(encode_server_metadata("onepass", options_.version));
  }

  void model_metadata(GenericCall& call, std::string_view request) {
    const ModelRef ref = decode_model_ref(request);
    const auto model = select_model(service_, ref.name);
    call.record().set_model(model.name);
    check_version(model.name, ref.version);
    call.respond(encode_model_metadata(model.name, kVersion, "onepass", kserve_v2::input_metadata(),
                                       kserve_v2::output_metadata(model)));
  }

  void model_infer(GenericCall& call, std::string_view request) {
    const auto model = select_model(service_, peek_model_name(request));
    call.record().set_model(model.name);
    auto decoded = decode_model_infer_request(request);
    check_version(model.name, decoded.model_version);
    auto prepared = kserve_v2::prepare_infer(model, options_, decoded.inputs,
                                             std::move(decoded.requested), decoded.parameters);
    prepared.request.trace = call.record().trace_context();  // the runtime's spans: children
    prepared.request.deadline = runtime::steady_deadline(call.context().deadline());
    if (past_deadline(call.context())) {
      call.fail({grpc::Status(grpc::StatusCode::DEADLINE_EXCEEDED,
                              "the deadline passed before the call ran"),
                 504});
      return;
    }
    // Admission happens here, on this thread: a refusal throws before anything is queued.
    service_.submit(
        std::move(prepared.request),
        [&call, name = model.name, id = std::move(decoded.id), raw = decoded.raw,
         outputs = std::move(prepared.outputs)](runtime::InferenceResult result) {
          try {
            call.record().set_inference(result.items.size(), result.total_tokens);
            if (result.error) std::rethrow_exception(result.error);
            for (const auto& item : result.items)
              for (const float v : item.values)
                if (!std::isfinite(v))
                  throw ApiError(ApiErrorKind::kBackend,
                                 "the model produced NaN or Inf for this input");
            // The client gave up waiting: its answer is not worth encoding.
            if (past_deadline(call.context())) {
              call.fail({grpc::Status(grpc::StatusCode::DEADLINE_EXCEEDED,
                                      "the deadline passed while the call ran"),
                         504});
              return;
            }
            call.respond(encode_model_infer_response(name, kVersion, id, outputs(result), raw));
          } catch (...) {
            call.fail(status_of(std::current_exception()));
          }
        });
  }

  void repository_model_load(GenericCall& call, std::string_view request) {
    require_management();
    const std::string name = decode_model_ref(request).name;
    if (!runtime::is_valid_model_name(name))
      throw ApiError(ApiErrorKind::kValidation,
                     "'model_name' must be 1 to " + std::to_string(runtime::kMaxModelNameBytes) +
                         " characters of A-Z a-z 0-9 . _ -, not '.' or '..'");
    call.record().set_model(name);
    if (service_.find_model(name)) {  // loaded already: nothing to do
      call.respond(encode_repository_answer(name, true));
      return;
    }
    // The folder this name was served from (--model, POST /models): the repository a Triton
    // client loads from by name. A name never served has none.
    const auto url = model_urls_.find(name);
    if (!url)
      throw ApiError(ApiErrorKind::kNotFound,
                     "no model folder is known for " + quote_client_text(name) +
                         " (name it at --model or load it once with POST /models)");
    std::string folder = *url;
    constexpr std::string_view kFileScheme = "file://";
    if (std::string_view(folder).substr(0, kFileScheme.size()) == kFileScheme)
      folder.erase(0, kFileScheme.size());
    service_.load_model(name, folder, [&call, name](std::exception_ptr error) {
      if (error)
        call.fail(status_of(error));
      else
        call.respond(encode_repository_answer(name, true));
    });
  }

  void repository_model_unload(GenericCall& call, std::string_view request) {
    require_management();
    const std::string name = decode_model_ref(request).name;
    validate_model_name(name);
    call.record().set_model(name);
    if (!service_.find_model(name))
      throw ApiError(ApiErrorKind::kNotFound,
                     "model " + quote_client_text(name) + " is not loaded");
    // The folder stays known, so RepositoryModelLoad can bring it back.
    service_.unload_model(name);
    call.respond(encode_repository_answer(name, true));
  }

  // The API key (unless `access` is a health check) and draining, as REST checks them.
  void admit(const grpc::CallbackServerContext& context, Access access) const {
    if (access == Access::kClosed && !options_.api_key.empty()) {
      const auto& all = context.client_metadata();
      const auto it = all.find("authorization");
      if (it == all.end() || !bearer_matches(view(it->second), options_.api_key))
        throw ApiError(ApiErrorKind::kUnauthorized, "missing or invalid API key");
    }
    if (draining_ && access == Access::kClosed)
      throw ApiError(ApiErrorKind::kUnavailable, "the server is shutting down");
  }

  void require_management() const {
    if (!options_.enable_model_management)
      throw ApiError(ApiErrorKind::kMethodNotAllowed,
                     "loading and unloading models needs --enable-model-management");
  }

  static void check_version(const std::string& model, const std::string& version) {
    if (!version.empty() && version != kVersion)
      throw ApiError(ApiErrorKind::kNotFound, "model " + quote_client_text(model) +
                                                  " has version 1 only, not " +
                                                  quote_client_text(version));
  }

  runtime::InferenceService& service_;
  const ApiOptions& options_;
  ModelUrls& model_urls_;
  std::atomic<bool> draining_{false};
};

const GrpcServer::Service::Method GrpcServer::Service::kMethods[] = {
    {"ServerLive", Access::kLiveness, &Service::server_live},
    {"ServerReady", Access::kReadiness, &Service::server_ready},
    {"ModelReady", Access::kClosed, &Service::model_ready},
    {"ServerMetadata", Access::kClosed, &Service::server_metadata},
    {"ModelMetadata", Access::kClosed, &Service::model_metadata},
    {"ModelInfer", Access::kClosed, &Service::model_infer},
    {"RepositoryModelLoad", Access::kClosed, &Service::repository_model_load},
    {"RepositoryModelUnload", Access::kClosed, &Service::repository_model_unload},
};

grpc::ServerGenericBidiReactor* GrpcServer::Service::CreateReactor(
    grpc::GenericCallbackServerContext* context) {
  constexpr std::string_view kPrefix = "/inference.GRPCInferenceService/";
  const std::string& full = context->method();
  const std::string_view method = std::string_view(full).substr(0, kPrefix.size()) == kPrefix
                                      ? std::string_view(full).substr(kPrefix.size())
                                      : std::string_view();
  for (const auto& entry : kMethods) {
    if (method != entry.name) continue;
    return new GenericCall(*context, entry.name, service_,
                           [this, &entry](GenericCall& call, std::string_view request) {
                             admit(call.context(), entry.access);
                             (this->*entry.handle)(call, request);
                           });
  }
  return new GenericCall(*context, "unknown", service_, [](GenericCall& call, std::string_view) {
    call.fail({grpc::Status(grpc::StatusCode::UNIMPLEMENTED,
                            "no such method: onepass serves inference.GRPCInferenceService"),
               404});
  });
}

struct GrpcServer::Impl {
  std::unique_ptr<grpc::Server> server;
};

GrpcServer::GrpcServer(runtime::InferenceService& service, const ApiOptions& options,
                       ModelUrls& model_urls, GrpcOptions grpc_options)
    : service_(std::make_unique<Service>(service, options, model_urls)),
      grpc_options_(std::move(grpc_options)),
      impl_(std::make_unique<Impl>()) {}

GrpcServer::~GrpcServer() {
  if (impl_->server) shutdown(std::chrono::milliseconds(0));
}

namespace {

std::string host_port(const std::string& host, int port) {
  const bool ipv6 = host.find(':') != std::string::npos && host.front() != '[';
  return (ipv6 ? "[" + host + "]" : host) + ":" + std::to_string(port);
}

}  // namespace

void GrpcServer::start() {
  grpc::ServerBuilder builder;
  const std::string wanted = host_port(grpc_options_.host, grpc_options_.port);
  builder.AddListeningPort(wanted, grpc::InsecureServerCredentials(), &bound_port_);
  // gRPC shares a port between processes by default (SO_REUSEPORT): a second server on a busy
  // port would start and take half the calls instead of failing.
  builder.AddChannelArgument(GRPC_ARG_ALLOW_REUSEPORT, 0);
  const int limit = static_cast<int>(
      std::min<std::size_t>(grpc_options_.max_message_bytes, std::size_t{INT32_MAX}));
  builder.SetMaxReceiveMessageSize(limit);
  builder.SetMaxSendMessageSize(limit);
  builder.RegisterCallbackGenericService(service_.get());
  impl_->server = builder.BuildAndStart();
  if (!impl_->server || bound_port_ == 0)
    throw Error(ErrorKind::kUnavailable, "cannot listen for gRPC on " + wanted);
}

std::string GrpcServer::address() const { return host_port(grpc_options_.host, bound_port_); }

void GrpcServer::begin_drain() { service_->begin_drain(); }

void GrpcServer::shutdown(std::chrono::milliseconds grace) {
  if (!impl_->server) return;
  service_->begin_drain();
  impl_->server->Shutdown(std::chrono::system_clock::now() + grace);
  impl_->server->Wait();
  impl_->server.reset();
}

}  // namespace onepass::api::kserve_grpc
