#include "api/kserve_grpc/service.h"

#include <filesystem>
#include <memory>
#include <string_view>

#include "api/common/api_error.h"
#include "api/common/model_select.h"
#include "api/kserve_grpc/messages.h"
#include "runtime/model_name.h"

namespace onepass::api::kserve_grpc {

namespace {

using grpc_server::Access;
using grpc_server::Answer;
using grpc_server::CallStatus;
using grpc_server::status_of;

constexpr const char* kVersion = "1";  // the one version of each model, as REST's metadata says

// Every method of inference.GRPCInferenceService, by its full name. A method answers with
// call.respond() (on this thread or, for ModelInfer and RepositoryModelLoad, on the runtime's)
// or throws, which the call answers through status_of().
class Methods {
 public:
  explicit Methods(const grpc_server::ServiceContext& context)
      : service_(context.service),
        options_(context.options),
        model_urls_(context.model_urls),
        draining_(context.draining) {}

  void server_live(const Answer& call, std::string_view) { call.respond(encode_flag(true)); }

  void server_ready(const Answer& call, std::string_view) {
    call.respond(encode_flag(!draining_ && service_.ready()));
  }

  void model_ready(const Answer& call, std::string_view request) {
    const ModelRef ref = decode_model_ref(request);
    // A model that failed to load is not ready: ready false, not an error.
    const auto model = select_model_in_any_state(service_, ref.name);
    call.record().set_model(model.name);
    check_version(model.name, ref.version);
    call.respond(encode_flag(model.state == runtime::ModelState::kReady));
  }

  void server_metadata(const Answer& call, std::string_view) {
    call.respond(encode_server_metadata("onepass", options_.version));
  }

  void model_metadata(const Answer& call, std::string_view request) {
    const ModelRef ref = decode_model_ref(request);
    const auto model = select_model(service_, ref.name);
    call.record().set_model(model.name);
    check_version(model.name, ref.version);
    call.respond(encode_model_metadata(model.name, kVersion, "onepass", kserve_v2::input_metadata(),
                                       kserve_v2::output_metadata(model)));
  }

  void model_infer(const Answer& call, std::string_view request) {
    const auto model = select_model(service_, peek_model_name(request));
    call.record().set_model(model.name);
    auto decoded = decode_model_infer_request(request);
    check_version(model.name, decoded.model_version);
    auto prepared = kserve_v2::prepare_infer(model, options_, decoded.inputs,
                                             std::move(decoded.requested), decoded.parameters);
    if (!call.prepare(prepared.request)) return;
    // Admission happens here, on this thread: a refusal throws before anything is queued.
    service_.submit(
        std::move(prepared.request),
        [call, name = model.name, id = std::move(decoded.id), raw = decoded.raw,
         outputs = std::move(prepared.outputs)](runtime::InferenceResult result) {
          try {
            if (!call.accept(result)) return;
            call.respond(encode_model_infer_response(name, kVersion, id, outputs(result), raw));
          } catch (...) {
            call.fail(status_of(std::current_exception()));
          }
        });
  }

  void repository_model_load(const Answer& call, std::string_view request) {
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
    service_.load_model(name, folder, [call, name](std::exception_ptr error) {
      if (error)
        call.fail(status_of(error));
      else
        call.respond(encode_repository_answer(name, true));
    });
  }

  void repository_model_unload(const Answer& call, std::string_view request) {
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
  const std::atomic<bool>& draining_;
};

}  // namespace

grpc_server::ServiceTable service(const grpc_server::ServiceContext& context) {
  auto methods = std::make_shared<Methods>(context);
  const auto method = [&methods](const char* name, Access access,
                                 void (Methods::*handle)(const Answer&, std::string_view)) {
    grpc_server::Method entry{name, access, grpc_server::Shape::kUnary, {}, {}, 0};
    entry.handle = [methods, handle](const Answer& call, std::string_view request) {
      ((*methods).*handle)(call, request);
    };
    return entry;
  };
  return {"inference.GRPCInferenceService",
          "kserve-grpc",
          {
              method("ServerLive", Access::kLiveness, &Methods::server_live),
              method("ServerReady", Access::kReadiness, &Methods::server_ready),
              method("ModelReady", Access::kClosed, &Methods::model_ready),
              method("ServerMetadata", Access::kClosed, &Methods::server_metadata),
              method("ModelMetadata", Access::kClosed, &Methods::model_metadata),
              method("ModelInfer", Access::kClosed, &Methods::model_infer),
              method("RepositoryModelLoad", Access::kClosed, &Methods::repository_model_load),
              method("RepositoryModelUnload", Access::kClosed, &Methods::repository_model_unload),
          }};
}

}  // namespace onepass::api::kserve_grpc
