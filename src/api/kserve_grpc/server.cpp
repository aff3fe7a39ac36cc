#include "api/kserve_grpc/server.h"

#include <grpcpp/grpcpp.h>

#include <atomic>
#include <cmath>
#include <filesystem>
#include <functional>
#include <string_view>

#include "api/common/api_error.h"
#include "api/common/api_key.h"
#include "api/common/model_select.h"
#include "api/kserve_grpc/codec.h"
#include "api/kserve_grpc/status.h"
#include "base/error.h"
#include "base/log.h"
#include "grpc_predict_v2.grpc.pb.h"
#include "runtime/model_name.h"

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

// One call's log line and request metric, written when it finishes (as REST's Reply does): the
// method as its route label, the model, the status (with REST's code beside it, so that the
// request metrics stay one family), the latency and the request id.
class CallRecord {
 public:
  CallRecord(runtime::InferenceService& service, const char* method,
             grpc::CallbackServerContext& context)
      : service_(service), method_(method), start_(std::chrono::steady_clock::now()) {
    std::string header;
    request_id_ = log::request_id_from(metadata(context, "x-request-id", header));
    context.AddInitialMetadata("x-request-id", request_id_);
  }
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
      log::write(level, "request", fields);
    } catch (...) {
      // Nor may a log line.
    }
  }

 private:
  runtime::InferenceService& service_;
  const char* method_;
  std::chrono::steady_clock::time_point start_;
  std::string request_id_;
  std::string model_;
  std::size_t inputs_ = 0;
  std::size_t tokens_ = 0;
};

bool past_deadline(const grpc::CallbackServerContext& context) {
  return std::chrono::system_clock::now() > context.deadline();
}

}  // namespace

class GrpcServer::Service final : public inference::GRPCInferenceService::CallbackService {
 public:
  Service(runtime::InferenceService& service, const ApiOptions& options, ModelUrls& model_urls)
      : service_(service), options_(options), model_urls_(model_urls) {}

  void begin_drain() { draining_ = true; }

  grpc::ServerUnaryReactor* ServerLive(grpc::CallbackServerContext* context,
                                       const inference::ServerLiveRequest*,
                                       inference::ServerLiveResponse* response) override {
    return answer(context, "ServerLive", Access::kLiveness,
                  [response](CallRecord&) { response->set_live(true); });
  }

  grpc::ServerUnaryReactor* ServerReady(grpc::CallbackServerContext* context,
                                        const inference::ServerReadyRequest*,
                                        inference::ServerReadyResponse* response) override {
    return answer(context, "ServerReady", Access::kReadiness, [this, response](CallRecord&) {
      response->set_ready(!draining_ && service_.ready());
    });
  }

  grpc::ServerUnaryReactor* ModelReady(grpc::CallbackServerContext* context,
                                       const inference::ModelReadyRequest* request,
                                       inference::ModelReadyResponse* response) override {
    return answer(context, "ModelReady", Access::kClosed,
                  [this, request, response](CallRecord& record) {
                    // A model that failed to load is not ready: ready false, not an error.
                    const auto model = select_model_in_any_state(service_, request->name());
                    record.set_model(model.name);
                    check_version(model.name, request->version());
                    response->set_ready(model.state == runtime::ModelState::kReady);
                  });
  }

  grpc::ServerUnaryReactor* ServerMetadata(grpc::CallbackServerContext* context,
                                           const inference::ServerMetadataRequest*,
                                           inference::ServerMetadataResponse* response) override {
    return answer(context, "ServerMetadata", Access::kClosed, [this, response](CallRecord&) {
      response->set_name("onepass");
      response->set_version(options_.version);
    });
  }

  grpc::ServerUnaryReactor* ModelMetadata(grpc::CallbackServerContext* context,
                                          const inference::ModelMetadataRequest* request,
                                          inference::ModelMetadataResponse* response) override {
    return answer(context, "ModelMetadata", Access::kClosed,
                  [this, request, response](CallRecord& record) {
                    const auto model = select_model(service_, request->name());
                    record.set_model(model.name);
                    check_version(model.name, request->version());
                    response->set_name(model.name);
                    response->add_versions(kVersion);
                    response->set_platform("onepass");
                    for (const auto& tensor : kserve_v2::input_metadata())
                      add_metadata(*response->add_inputs(), tensor);
                    for (const auto& tensor : kserve_v2::output_metadata(model))
                      add_metadata(*response->add_outputs(), tensor);
                  });
  }

  grpc::ServerUnaryReactor* ModelInfer(grpc::CallbackServerContext* context,
                                       const inference::ModelInferRequest* request,
                                       inference::ModelInferResponse* response) override {
    auto* reactor = context->DefaultReactor();
    auto record = std::make_shared<CallRecord>(service_, "ModelInfer", *context);
    try {
      admit(*context, Access::kClosed);
      const auto model = select_model(service_, request->model_name());
      record->set_model(model.name);
      check_version(model.name, request->model_version());
      auto decoded = decode_infer_request(*request);
      auto prepared = kserve_v2::prepare_infer(model, options_, decoded.inputs,
                                               std::move(decoded.requested), decoded.parameters);
      if (past_deadline(*context))
        return finish(reactor, *record,
                      {grpc::Status(grpc::StatusCode::DEADLINE_EXCEEDED,
                                    "the deadline passed before the call ran"),
                       504});
      response->set_model_name(model.name);
      response->set_model_version(kVersion);
      response->set_id(request->id());
      // Admission happens here, on this thread: a refusal throws before anything is queued.
      service_.submit(std::move(prepared.request),
                      [reactor, context, response, record, raw = decoded.raw,
                       outputs = std::move(prepared.outputs)](runtime::InferenceResult result) {
                        CallStatus status{grpc::Status::OK, 200};
                        try {
                          record->set_inference(result.items.size(), result.total_tokens);
                          if (result.error) std::rethrow_exception(result.error);
                          for (const auto& item : result.items)
                            for (const float v : item.values)
                              if (!std::isfinite(v))
                                throw ApiError(ApiErrorKind::kBackend,
                                               "the model produced NaN or Inf for this input");
                          // The client gave up waiting: its answer is not worth encoding.
                          if (past_deadline(*context))
                            status = {grpc::Status(grpc::StatusCode::DEADLINE_EXCEEDED,
                                                   "the deadline passed while the call ran"),
                                      504};
                          else
                            encode_outputs(outputs(result), raw, *response);
                        } catch (...) {
                          status = status_of(std::current_exception());
                        }
                        record->finish(status);
                        reactor->Finish(status.status);
                      });
    } catch (...) {
      return finish(reactor, *record, status_of(std::current_exception()));
    }
    return reactor;
  }

  grpc::ServerUnaryReactor* RepositoryModelLoad(
      grpc::CallbackServerContext* context, const inference::RepositoryModelLoadRequest* request,
      inference::RepositoryModelLoadResponse* response) override {
    auto* reactor = context->DefaultReactor();
    auto record = std::make_shared<CallRecord>(service_, "RepositoryModelLoad", *context);
    try {
      admit(*context, Access::kClosed);
      const std::string& name = request->model_name();
      require_management();
      if (!runtime::is_valid_model_name(name))
        throw ApiError(ApiErrorKind::kValidation,
                       "'model_name' must be 1 to " + std::to_string(runtime::kMaxModelNameBytes) +
                           " characters of A-Z a-z 0-9 . _ -, not '.' or '..'");
      record->set_model(name);
      response->set_model_name(name);
      if (service_.find_model(name)) {  // loaded already: nothing to do
        response->set_isloaded(true);
        return finish(reactor, *record, {grpc::Status::OK, 200});
      }
      // The folder this name was served from (--model, POST /models): the repository a Triton
      // client loads from by name. A name never served has none.
      std::string folder = model_urls_.get(name);
      constexpr std::string_view kFileScheme = "file://";
      if (std::string_view(folder).substr(0, kFileScheme.size()) == kFileScheme)
        folder.erase(0, kFileScheme.size());
      if (folder == name || !std::filesystem::path(folder).is_absolute())
        throw ApiError(ApiErrorKind::kNotFound,
                       "no model folder is known for " + quote_client_text(name) +
                           " (name it at --model or load it once with POST /models)");
      service_.load_model(name, folder, [reactor, response, record](std::exception_ptr error) {
        CallStatus status{grpc::Status::OK, 200};
        if (error)
          status = status_of(error);
        else
          response->set_isloaded(true);
        record->finish(status);
        reactor->Finish(status.status);
      });
    } catch (...) {
      return finish(reactor, *record, status_of(std::current_exception()));
    }
    return reactor;
  }

  grpc::ServerUnaryReactor* RepositoryModelUnload(
      grpc::CallbackServerContext* context, const inference::RepositoryModelUnloadRequest* request,
      inference::RepositoryModelUnloadResponse* response) override {
    return answer(context, "RepositoryModelUnload", Access::kClosed,
                  [this, request, response](CallRecord& record) {
                    require_management();
                    const std::string& name = request->model_name();
                    validate_model_name(name);
                    record.set_model(name);
                    if (!service_.find_model(name))
                      throw ApiError(ApiErrorKind::kNotFound,
                                     "model " + quote_client_text(name) + " is not loaded");
                    // The folder stays known, so RepositoryModelLoad can bring it back.
                    service_.unload_model(name);
                    response->set_model_name(name);
                    response->set_isunloaded(true);
                  });
  }

 private:
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

  static void add_metadata(inference::ModelMetadataResponse::TensorMetadata& out,
                           const kserve_v2::TensorMetadata& tensor) {
    out.set_name(tensor.name);
    out.set_datatype(tensor.datatype);
    for (const auto d : tensor.shape) out.add_shape(d);
  }

  static grpc::ServerUnaryReactor* finish(grpc::ServerUnaryReactor* reactor, CallRecord& record,
                                          const CallStatus& status) {
    record.finish(status);
    reactor->Finish(status.status);
    return reactor;
  }

  // A call answered on the calling thread: `body` fills the response or throws.
  grpc::ServerUnaryReactor* answer(grpc::CallbackServerContext* context, const char* method,
                                   Access access, const std::function<void(CallRecord&)>& body) {
    auto* reactor = context->DefaultReactor();
    CallRecord record(service_, method, *context);
    try {
      admit(*context, access);
      body(record);
      return finish(reactor, record, {grpc::Status::OK, 200});
    } catch (...) {
      return finish(reactor, record, status_of(std::current_exception()));
    }
  }

  runtime::InferenceService& service_;
  const ApiOptions& options_;
  ModelUrls& model_urls_;
  std::atomic<bool> draining_{false};
};

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
  builder.RegisterService(service_.get());
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
