// One api::Api over one FakeService (fake_service.h), for the fuzz targets that build their own
// requests (the raw HTTP path); the JSON route targets use post_to_each_task (api_fuzz_common.h).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "api/api.h"
#include "api/fuzz/api_fuzz_common.h"

namespace onepass::api::fuzzing {

class FakeService;

// Api's options for fuzzing: a small client batch, model management on.
ApiOptions fuzz_options();

struct Endpoint {
  std::unique_ptr<FakeService> service;
  std::unique_ptr<Api> api;

  Endpoint(const std::vector<std::string>& models, ApiOptions options);
  ~Endpoint();
  Endpoint(Endpoint&&) noexcept = default;
  Endpoint& operator=(Endpoint&&) noexcept = default;

  // Handles `request`, runs the completions it queued, checks and returns the one answer.
  http::Response exchange(http::Request request);
};

}  // namespace onepass::api::fuzzing
