// Routing: method + path to a dialect handler, with the API key and draining checks in front.
#include "api/api.h"

#include <array>
#include <vector>

#include "api/cohere/cohere.h"
#include "api/common/api_key.h"
#include "api/common/dialect.h"
#include "api/common/generic_dialect.h"
#include "api/common/health.h"
#include "api/common/model_select.h"
#include "api/gliner/gliner.h"
#include "api/kserve_v2/kserve.h"
#include "api/openai/openai.h"
#include "api/sagemaker/sagemaker.h"
#include "api/tei/tei.h"
#include "api/vllm/vllm.h"
#include "base/client_text.h"
#include "base/log.h"
#include "trace/tracer.h"

namespace onepass::api {

namespace {

// No HTTP method is longer; a longer one is still answered (405 or 404), its log line cut.
constexpr std::size_t kLoggedMethodBytes = 16;

// Every dialect, in match order: routes are tried dialect by dialect, each dialect's in its own
// order, and the first whose method and path match wins. A new dialect is one line here.
constexpr std::array kDialects = {
    &sagemaker::kDialect,              // /ping, /invocations, /models*
    &sagemaker::kInferenceApiDialect,  // POST /, POST /models/{model}
    &tei::kDialect,                    // /health, /predict, /rerank, /embed, /info, ...
    &kserve_v2::kDialect,              // /v2/...
    &openai::kDialect,                 // /v1/embeddings
    &cohere::kDialect,                 // /v1/rerank, /v2/rerank
    &vllm::kDialect,                   // /classify, /score, /v1/score
    &gliner::kDialect,                 // /extract
    &kGenericDialect,                  // /metrics
};

std::vector<std::string_view> split_path(std::string_view path) {
  std::vector<std::string_view> segments;
  if (path.empty() || path.front() != '/') return segments;
  path.remove_prefix(1);
  if (path.empty()) return segments;
  while (true) {
    const auto slash = path.find('/');
    segments.push_back(path.substr(0, slash));
    if (slash == std::string_view::npos) break;
    path.remove_prefix(slash + 1);
  }
  return segments;
}

// Matches `segments` against a pattern; the {model} segment lands in `model` (still encoded).
bool matches(const Route& route, const std::vector<std::string_view>& segments,
             std::string_view& model) {
  const auto pattern = split_path(route.pattern);
  if (pattern.size() != segments.size()) return false;
  for (std::size_t i = 0; i < pattern.size(); ++i) {
    if (pattern[i] == "{model}") {
      model = segments[i];
      continue;
    }
    if (pattern[i] != segments[i]) return false;
  }
  return true;
}

struct Match {
  const Route* route = nullptr;
  const DialectSpec* dialect = nullptr;  // the route's
  std::string_view model;
  std::string allowed;  // methods of routes whose path matched, for 405
  bool path_matched = false;
};

Match find_route(std::string_view method, std::string_view path, bool management) {
  Match match;
  const auto segments = split_path(path);
  for (const DialectSpec* dialect : kDialects) {
    for (const Route& route : dialect->routes) {
      if ((route.flags & kRouteManagement) && !management) continue;
      std::string_view model;
      if (!matches(route, segments, model)) continue;
      match.path_matched = true;
      if (method == route.method) {
        match.route = &route;
        match.dialect = dialect;
        match.model = model;
        return match;
      }
      if (!match.allowed.empty()) match.allowed += ", ";
      match.allowed += route.method;
    }
  }
  return match;
}

bool authorized(const http::Request& request, const std::string& key) {
  const std::string* header = request.header("authorization");
  return header != nullptr && bearer_matches(*header, key);
}

const DialectSpec& dialect_for_path(std::string_view path, bool management) {
  const auto segments = split_path(path);
  for (const DialectSpec* dialect : kDialects) {
    for (const Route& route : dialect->routes) {
      std::string_view model;
      if (matches(route, segments, model)) return *dialect;
    }
  }
  (void)management;
  return kGenericDialect;
}

}  // namespace

void ModelUrls::set(const std::string& name, const std::string& url) {
  std::lock_guard lock(mutex_);
  urls_[name] = url;
}

void ModelUrls::erase(const std::string& name) {
  std::lock_guard lock(mutex_);
  urls_.erase(name);
}

std::string ModelUrls::get(const std::string& name) const {
  std::lock_guard lock(mutex_);
  const auto it = urls_.find(name);
  return it == urls_.end() ? name : it->second;
}

std::optional<std::string> ModelUrls::find(const std::string& name) const {
  std::lock_guard lock(mutex_);
  const auto it = urls_.find(name);
  if (it == urls_.end()) return std::nullopt;
  return it->second;
}

Api::Api(runtime::InferenceService& service, ApiOptions options)
    : service_(service), options_(std::move(options)) {}

Api::~Api() = default;

void Api::begin_drain() { draining_ = true; }

void Api::handle(http::Request request, http::Respond respond) {
  if (request.received == std::chrono::steady_clock::time_point{})
    request.received = std::chrono::steady_clock::now();
  const auto start = request.received;
  const std::string path(request.path());
  const Match match = find_route(request.method, path, options_.enable_model_management);
  const DialectSpec& dialect =
      match.route ? *match.dialect : dialect_for_path(path, options_.enable_model_management);
  Reply reply(std::move(respond), dialect, match.route ? match.route->pattern : "unmatched",
              service_, start);
  // The method is any token a client sends: the log line keeps a short prefix of it.
  reply.set_request(request.method.substr(0, kLoggedMethodBytes),
                    log::request_id_from(request.header("x-request-id")));
  if (trace::active() != nullptr) reply.start_trace(request);
  try {
    const bool open = match.route && (match.route->flags & kRouteOpen);
    if (!options_.api_key.empty() && !open && !authorized(request, options_.api_key))
      throw ApiError(ApiErrorKind::kUnauthorized, "missing or invalid API key");
    if (!match.route) {
      if (match.path_matched) {
        http::Response response = error_response(
            dialect,
            ApiError(ApiErrorKind::kMethodNotAllowed,
                     "method " + quote_client_text(request.method) + " is not allowed here"));
        response.headers.push_back({"Allow", match.allowed});
        reply.send(std::move(response));
        return;
      }
      throw ApiError(ApiErrorKind::kNotFound, "no route for " + quote_client_text(request.method) +
                                                  " " + quote_client_text(path, 128));
    }
    const bool liveness = match.route->flags & kRouteLiveness;
    if (draining_ && (match.route->flags & kRouteReadiness)) {
      answer_unhealthy(reply);
      return;
    }
    if (draining_ && !liveness)
      throw ApiError(ApiErrorKind::kUnavailable, "the server is shutting down");
    std::string model;
    if (!match.model.empty()) {
      auto decoded = percent_decode(match.model);
      if (!decoded) throw ApiError(ApiErrorKind::kNotFound, "model name is not valid", "model");
      validate_model_name(*decoded);
      model = std::move(*decoded);
      reply.set_model(model);
    }
    Call call{std::move(request), reply, std::move(model), service_, options_, urls_};
    match.route->handler(call);
  } catch (...) {
    reply.fail(std::current_exception());
  }
}

http::Response Api::transport_error(int status, std::string_view target, std::string_view message) {
  std::string_view path = target.substr(0, target.find('?'));
  const DialectSpec& dialect = dialect_for_path(path, options_.enable_model_management);
  http::Response response =
      error_response(dialect, ApiError(kind_for_status(status), std::string(message)));
  response.status = status;
  try {
    service_.record_http_request("transport", "", status, std::chrono::nanoseconds(0));
  } catch (...) {
  }
  return response;
}

}  // namespace onepass::api
