// The API fuzz targets' shared harness (api_fuzz_common.h, api_fuzz_endpoint.h).
#include "api/fuzz/api_fuzz_common.h"

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "api/fuzz/api_fuzz_endpoint.h"
#include "api/fuzz/fake_service.h"
#include "api/fuzz/planted_folders.h"

namespace onepass::api::fuzzing {
namespace {

bool allowed_status(int status) {
  switch (status) {
    case 200:
    case 400:
    case 401:
    case 404:
    case 405:
    case 409:
    case 413:
    case 415:
    case 422:
    case 424:
    case 429:
    case 431:
    case 503:
    case 507:
      return true;
    default:
      return false;
  }
}

bool clean_header_text(std::string_view text) {
  for (const char c : text)
    if (c == '\r' || c == '\n' || c == '\0') return false;
  return true;
}

// The error text of any dialect's error body: {"error": "..."}, {"message": "..."} or
// {"error": {"message": "..."}}.
std::string error_message(const nlohmann::json& body) {
  if (!body.is_object()) return {};
  for (const char* key : {"error", "message"}) {
    const auto it = body.find(key);
    if (it == body.end()) continue;
    if (it->is_string()) return it->get<std::string>();
    if (it->is_object() && it->contains("message") && (*it)["message"].is_string())
      return (*it)["message"].get<std::string>();
  }
  return {};
}

}  // namespace

void check(bool ok) {
  if (!ok) std::abort();
}

void fail(const char* rule, const http::Response& response) {
  std::fprintf(stderr, "api fuzz: %s\nstatus %d, content type '%s'\nbody: %.2000s\n", rule,
               response.status, response.content_type.c_str(), response.body.c_str());
  std::abort();
}

// docs/reliability.md "Bad input": whatever the request held.
constexpr std::size_t kMaxErrorBodyBytes = 1024;

void check_response(const http::Response& response) {
  if (!allowed_status(response.status))
    fail("status outside docs/api.md's error classes", response);
  if (response.status >= 400 && response.body.size() >= kMaxErrorBodyBytes)
    fail("an error body of 1 KiB or more: it echoes what the client sent", response);
  if (!clean_header_text(response.content_type))
    fail("CR, LF or NUL in the content type", response);
  for (const auto& h : response.headers)
    if (h.name.empty() || !clean_header_text(h.name) || !clean_header_text(h.value))
      fail("empty header name, or CR, LF or NUL in a header", response);
  if (response.content_type.rfind("application/json", 0) != 0) return;
  // nlohmann rejects invalid UTF-8, NaN and anything after the value.
  const auto body = nlohmann::json::parse(response.body, nullptr, /*allow_exceptions=*/false);
  if (body.is_discarded()) fail("the body is not strict JSON", response);
  if (response.status >= 400 && error_message(body).rfind("[json.exception", 0) == 0)
    fail("an nlohmann exception leaked into the error message", response);
}

namespace {

// The fake service as the fuzzer needs it: single-threaded (completions run in exchange()), small
// limits the fuzzer reaches, loads that read a folder with the real readers and register
// nothing, so that no input changes what the next one meets.
FakeServiceOptions fuzz_service_options(const std::vector<std::string>& models) {
  FakeServiceOptions options;
  options.models = models;
  options.limits.hidden_size = 8;
  options.limits.max_tokens = 32;
  options.limits.max_input_bytes = 512;
  options.workers = 0;
  options.read_folder = read_model_folder;
  options.fixed_models = true;
  options.nan_marker = false;
  return options;
}

}  // namespace

Endpoint::Endpoint(const std::vector<std::string>& models, ApiOptions options)
    : service(std::make_unique<FakeService>(fuzz_service_options(models))),
      api(std::make_unique<Api>(*service, std::move(options))) {}

// Here, where FakeService is complete.
Endpoint::~Endpoint() = default;

http::Response Endpoint::exchange(http::Request request) {
  auto answers = std::make_shared<std::vector<http::Response>>();
  api->handle(std::move(request),
              [answers](http::Response response) { answers->push_back(std::move(response)); });
  service->run_pending();
  if (answers->size() != 1) {
    std::fprintf(stderr, "api fuzz: %zu answers to one request\n", answers->size());
    std::abort();
  }
  check_response(answers->front());
  return std::move(answers->front());
}

ApiOptions fuzz_options() {
  ApiOptions options;
  options.max_client_batch_size = 8;       // small, so the fuzzer reaches the limit
  options.enable_model_management = true;  // the fake reads folders, registers nothing
  return options;
}

void post_to_each_task(std::string_view path, const std::uint8_t* data, std::size_t size) {
  static std::vector<Endpoint>* endpoints = [] {
    auto* list = new std::vector<Endpoint>();
    for (const char* model : {"nli", "rerank", "embed", "ner", "splade", "qa", "extract"})
      list->emplace_back(std::vector<std::string>{model}, fuzz_options());
    return list;
  }();
  const std::string body(reinterpret_cast<const char*>(data), size);
  for (auto& endpoint : *endpoints) {
    http::Request request;
    request.method = "POST";
    request.target = std::string(path);
    if (const auto slot = request.target.find("{model}"); slot != std::string::npos)
      request.target.replace(slot, 7, endpoint.service->models().front().name);
    request.headers.push_back({"content-type", "application/json"});
    request.body = body;
    const http::Response response = endpoint.exchange(std::move(request));
    // JSON has no raw NUL byte anywhere: a parser that stops at one answers the value before it
    // and never looks at the rest ('{"inputs":"a"}\0garbage').
    if (body.find('\0') != std::string::npos && response.status < 400)
      fail("a body holding a NUL byte was accepted", response);
  }
}

}  // namespace onepass::api::fuzzing
