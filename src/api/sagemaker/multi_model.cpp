// SageMaker multi-model endpoint routes (only with --enable-model-management). Model folders
// come from the operator's storage: a "url" must be an absolute local path without "..", never
// a URL to fetch; errors never echo the path.
#include <filesystem>
#include <new>

#include "api/common/api_error.h"
#include "api/common/json_writer.h"
#include "api/common/model_select.h"
#include "api/sagemaker/sagemaker.h"
#include "base/error.h"
#include "runtime/model_name.h"

namespace onepass::api::sagemaker {

namespace {

std::filesystem::path checked_model_path(const std::string& url) {
  std::string_view path = url;
  constexpr std::string_view kFileScheme = "file://";
  if (path.substr(0, kFileScheme.size()) == kFileScheme) path.remove_prefix(kFileScheme.size());
  if (path.empty() || path.front() != '/' || path.find('\0') != std::string_view::npos ||
      path.find("://") != std::string_view::npos || path.size() > 4096)
    throw ApiError(ApiErrorKind::kValidation, "'url' must be an absolute path to a model folder",
                   "url");
  const std::filesystem::path fs_path(path);
  for (const auto& part : fs_path)
    if (part == "..")
      throw ApiError(ApiErrorKind::kValidation, "'url' must not contain '..'", "url");
  return fs_path.lexically_normal();
}

// A load error as POST /models answers it (docs/api.md): taken name 409, no such folder 404,
// not a servable model 400 (422 in the table's terms, 400 in this dialect), out of memory 507,
// past --load-timeout or shutting down 503.
ApiError load_error(const std::string& name, const std::exception_ptr& error) {
  try {
    std::rethrow_exception(error);
  } catch (const Error& e) {
    switch (e.kind()) {
      case ErrorKind::kInvalidArgument:
        return {ApiErrorKind::kConflict, e.what()};
      case ErrorKind::kNotFound:
        return {ApiErrorKind::kNotFound, "model '" + name + "': " + e.what()};
      case ErrorKind::kInvalidModel:
      case ErrorKind::kUnsupported:
        return {ApiErrorKind::kValidation, "model '" + name + "': " + e.what()};
      default:
        return to_api_error(error);
    }
  } catch (const std::bad_alloc&) {
    return {ApiErrorKind::kInsufficientStorage, "not enough memory to load '" + name + "'"};
  } catch (...) {
    return to_api_error(error);
  }
}

void write_model(JsonWriter& json, const std::string& name, const std::string& url) {
  json.begin_object().key("modelName").value(name).key("modelUrl").value(url).end_object();
}

}  // namespace

void handle_list_models(Call& call) {
  JsonWriter json;
  json.begin_object().key("models").begin_array();
  for (const auto& model : call.service.models())
    write_model(json, model.name, call.model_urls.get(model.name));
  json.end_array().end_object();
  call.reply.json(json.take());
}

void handle_load_model(Call& call) {
  const Json body = parse_json_body(call.request);
  if (!body.is_object())
    throw ApiError(ApiErrorKind::kValidation, "body must be an object with 'model_name' and 'url'");
  const auto name = get_string(body, "model_name");
  const auto url = get_string(body, "url");
  if (!name || !url)
    throw ApiError(ApiErrorKind::kValidation, "'model_name' and 'url' are required");
  // A name no model can be registered under is a bad field of this body, not a missing model.
  if (!runtime::is_valid_model_name(*name)) {
    throw ApiError(ApiErrorKind::kValidation,
                   "'model_name' must be 1 to " + std::to_string(runtime::kMaxModelNameBytes) +
                       " characters of A-Z a-z 0-9 . _ -, not '.' or '..'");
  }
  call.reply.set_model(*name);
  const auto path = checked_model_path(*url);
  if (call.service.find_model(*name))
    throw ApiError(ApiErrorKind::kConflict, "model '" + *name + "' is already loaded");
  // Set first: the answer comes on the loader thread, which must not reach into the API (it
  // may answer at shutdown, after the API is gone). A failed load leaves a stale entry that no
  // listing shows (GET /models lists the service's models) and the next load overwrites.
  call.model_urls.set(*name, *url);
  // The load runs on the runtime's loader thread, never on this HTTP thread: health probes and
  // the other models keep answering while it reads the folder.
  try {
    call.service.load_model(
        *name, path, [reply = call.reply, name = *name](std::exception_ptr error) mutable {
          if (error) {
            reply.fail(load_error(name, error));
            return;
          }
          JsonWriter json;
          json.begin_object().key("status").value("Model \"" + name + "\" loaded").end_object();
          reply.json(json.take());
        });
  } catch (...) {
    throw load_error(*name, std::current_exception());
  }
}

void handle_describe_model(Call& call) {
  const auto model = call.service.find_model(call.path_model);
  if (!model)
    throw ApiError(ApiErrorKind::kNotFound, "model '" + call.path_model + "' is not loaded");
  JsonWriter json;
  write_model(json, model->name, call.model_urls.get(model->name));
  call.reply.json(json.take());
}

void handle_unload_model(Call& call) {
  if (!call.service.find_model(call.path_model))
    throw ApiError(ApiErrorKind::kNotFound, "model '" + call.path_model + "' is not loaded");
  call.service.unload_model(call.path_model);
  call.model_urls.erase(call.path_model);
  JsonWriter json;
  json.begin_object()
      .key("status")
      .value("Model \"" + call.path_model + "\" unloaded")
      .end_object();
  call.reply.json(json.take());
}

}  // namespace onepass::api::sagemaker
