// libFuzzer target: SageMaker multi-model POST /models request bodies (model name and folder
// checks, the load's error mapping), against model folders planted under kPlantedRoot
// (planted_folders.h) that the fake service reads as a load would. Besides the rules every answer
// keeps (api_fuzz_common.h): a planted hostile folder is refused with 400 or 404, at once.
#include <nlohmann/json.hpp>
#include <string>

#include "api/fuzz/api_fuzz_common.h"
#include "api/fuzz/api_fuzz_endpoint.h"
#include "api/fuzz/planted_folders.h"

namespace {

using onepass::api::fuzzing::kPlantedRoot;

// The planted folder a body names as its "url" (without "file://"), or "" when it names none.
std::string planted_folder(const std::string& body) {
  const auto json = nlohmann::json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (!json.is_object() || !json.contains("url") || !json["url"].is_string()) return {};
  std::string url = json["url"].get<std::string>();
  if (url.rfind("file://", 0) == 0) url.erase(0, 7);
  const std::string prefix = std::string(kPlantedRoot) + "/";
  if (url.rfind(prefix, 0) != 0) return {};
  url.erase(0, prefix.size());
  while (!url.empty() && url.back() == '/') url.pop_back();
  return url.find('/') == std::string::npos ? url : std::string{};
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  onepass::api::fuzzing::plant_model_folders();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace onepass::api::fuzzing;
  static Endpoint* endpoint = new Endpoint({"nli"}, fuzz_options());
  onepass::http::Request request;
  request.method = "POST";
  request.target = "/models";
  request.headers.push_back({"content-type", "application/json"});
  request.body.assign(reinterpret_cast<const char*>(data), size);
  const std::string folder = planted_folder(request.body);
  const auto response = endpoint->exchange(std::move(request));
  if (!folder.empty() && folder != "sound" && response.status == 200)
    fail("a hostile planted model folder was loaded", response);
  if (!folder.empty() && response.status >= 500)
    fail("a planted model folder's load failed as a server error", response);
  return 0;
}
