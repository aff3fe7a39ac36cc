#include "api/common/model_select.h"

#include "api/common/api_error.h"
#include "runtime/model_name.h"

namespace onepass::api {

namespace {

// SageMaker's own limit on TargetModel.
constexpr std::size_t kMaxTargetModelBytes = 1024;

[[noreturn]] void invalid_name() {
  throw ApiError(ApiErrorKind::kNotFound, "model name is not valid", "model");
}

}  // namespace

void validate_model_name(std::string_view name) {
  if (!runtime::is_valid_model_name(name)) invalid_name();
}

std::string sagemaker_target_name(std::string_view value) {
  if (value.empty() || value.size() > kMaxTargetModelBytes) invalid_name();
  std::size_t start = 0;
  std::string_view base;
  while (true) {
    const auto slash = value.find('/', start);
    const auto segment =
        value.substr(start, slash == std::string_view::npos ? value.npos : slash - start);
    if (segment == "." || segment == "..") invalid_name();
    if (slash == std::string_view::npos) {
      base = segment;
      break;
    }
    start = slash + 1;
  }
  constexpr std::string_view kArchive = ".tar.gz";
  if (base.size() > kArchive.size() && base.substr(base.size() - kArchive.size()) == kArchive)
    base.remove_suffix(kArchive.size());
  validate_model_name(base);
  return std::string(base);
}

std::optional<std::string> percent_decode(std::string_view segment) {
  std::string out;
  out.reserve(segment.size());
  auto hex = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  };
  for (std::size_t i = 0; i < segment.size(); ++i) {
    if (segment[i] != '%') {
      out.push_back(segment[i]);
      continue;
    }
    if (i + 2 >= segment.size()) return std::nullopt;
    const int hi = hex(segment[i + 1]);
    const int lo = hex(segment[i + 2]);
    if (hi < 0 || lo < 0) return std::nullopt;
    out.push_back(static_cast<char>(hi * 16 + lo));
    i += 2;
  }
  return out;
}

namespace {

// A model that failed to load answers with why (503), before a dialect's task check could
// misname it: a failed description has no task of its own.
runtime::ModelDescription usable(runtime::ModelDescription model) {
  if (model.state == runtime::ModelState::kFailed) {
    throw ApiError(ApiErrorKind::kUnavailable,
                   "model '" + model.name + "' failed to load: " + model.load_error);
  }
  return model;
}

runtime::ModelDescription find_selected(const runtime::InferenceService& service,
                                        std::string_view name, bool fallback_to_single) {
  if (!name.empty()) {
    if (fallback_to_single) {
      if (runtime::is_valid_model_name(name)) {
        if (auto found = service.find_model(name)) return *found;
      }
      // One model served: any name selects it, as TEI's OpenAI route does. Clients send Hub ids
      // ("BAAI/bge-small-en-v1.5") that no registered name can equal; the name is never a path.
      if (auto only = service.find_model("")) return *only;
      validate_model_name(name);
    } else {
      validate_model_name(name);
      if (auto found = service.find_model(name)) return *found;
    }
    throw ApiError(ApiErrorKind::kNotFound, "model '" + std::string(name) + "' is not loaded",
                   "model");
  }
  if (auto only = service.find_model("")) return *only;
  throw ApiError(ApiErrorKind::kNotFound,
                 "several models are served: choose one with the X-Amzn-SageMaker-Target-Model "
                 "header",
                 "model");
}

}  // namespace

runtime::ModelDescription select_model(const runtime::InferenceService& service,
                                       std::string_view name, bool fallback_to_single) {
  return usable(find_selected(service, name, fallback_to_single));
}

runtime::ModelDescription select_model_in_any_state(const runtime::InferenceService& service,
                                                    std::string_view name) {
  return find_selected(service, name, false);
}

runtime::ModelDescription select_model_from_body(const runtime::InferenceService& service,
                                                 std::string_view name) {
  if (name.empty() && !service.find_model(""))
    throw ApiError(ApiErrorKind::kNotFound,
                   "several models are served: choose one with the body's \"model\"", "model");
  return select_model(service, name, true);
}

runtime::ModelDescription select_model_from_header(const runtime::InferenceService& service,
                                                   const http::Request& request) {
  const std::string* target = request.header("x-amzn-sagemaker-target-model");
  if (!target) return select_model(service, "");
  return select_model(service, sagemaker_target_name(*target));
}

}  // namespace onepass::api
