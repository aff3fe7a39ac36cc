// What every route handler gets: the parsed request, its Reply, the service and the options.
#pragma once

#include <cstddef>
#include <map>
#include <mutex>
#include <optional>
#include <string>

#include "api/common/json_request.h"
#include "api/common/reply.h"
#include "base/version.h"
#include "http/message.h"
#include "runtime/serve_defaults.h"
#include "runtime/service.h"

namespace onepass::api {

struct ApiOptions {
  std::string api_key;  // empty: no authentication
  std::size_t max_client_batch_size = runtime::kDefaultMaxClientBatchSize;
  bool enable_model_management = false;
  bool auto_truncate = false;
  // --long-input: what an over-long input gets when the request does not say (long_input.h).
  runtime::LongInput long_input = runtime::LongInput::kReject;
  // Reported by TEI's /info; the runtime enforces them.
  std::size_t max_batch_tokens = runtime::kDefaultMaxBatchTokens;
  std::size_t max_batch_requests = runtime::kDefaultMaxBatchRequests;
  std::size_t max_concurrent_requests = runtime::kDefaultMaxConcurrentRequests;
  std::size_t max_input_length = 0;
  std::string version{onepass::version()};  // TEI /info, KServe v2 server metadata
  // HF_TASK, as the SageMaker inference toolkit reads it: the toolkit's answer shapes for its
  // sentence-transformers tasks (sentence-embeddings, sentence-ranking) at /invocations.
  std::string hf_task;
};

// Model names to the folder the operator gave (startup) or the MME request loaded; only for
// GET /models. Thread-safe.
class ModelUrls {
 public:
  void set(const std::string& name, const std::string& url);
  void erase(const std::string& name);
  std::string get(const std::string& name) const;
  // The folder, or nullopt when `name` has none (get() answers the name itself then).
  std::optional<std::string> find(const std::string& name) const;

 private:
  mutable std::mutex mutex_;
  std::map<std::string, std::string> urls_;
};

struct Call {
  http::Request request;
  Reply reply;
  std::string path_model;  // the decoded {model} path segment, when the route has one
  runtime::InferenceService& service;
  const ApiOptions& options;
  ModelUrls& model_urls;
};

}  // namespace onepass::api
