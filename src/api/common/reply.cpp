#include "api/common/reply.h"

#include <atomic>
#include <cmath>

namespace onepass::api {

struct Reply::State {
  http::Respond respond;
  Dialect dialect;
  std::string route;
  std::string model;
  runtime::InferenceService* service;
  std::chrono::steady_clock::time_point start;
  std::atomic<bool> answered{false};
};

Reply::Reply(http::Respond respond, Dialect dialect, std::string route,
             runtime::InferenceService& service, std::chrono::steady_clock::time_point start)
    : state_(std::make_shared<State>()) {
  state_->respond = std::move(respond);
  state_->dialect = dialect;
  state_->route = std::move(route);
  state_->service = &service;
  state_->start = start;
}

Dialect Reply::dialect() const { return state_->dialect; }

void Reply::set_model(const std::string& name) { state_->model = name; }

void Reply::send(http::Response response) {
  if (state_->answered.exchange(true)) return;
  const int status = response.status;
  state_->respond(std::move(response));
  try {
    state_->service->record_http_request(state_->route, state_->model, status,
                                         std::chrono::steady_clock::now() - state_->start);
  } catch (...) {
    // Metrics must never turn an answered request into a failure.
  }
}

void Reply::json(std::string body, int status, std::vector<http::Header> headers) {
  http::Response response = json_response(std::move(body), status);
  response.headers = std::move(headers);
  send(std::move(response));
}

void Reply::fail(const ApiError& error) { send(error_response(state_->dialect, error)); }

void Reply::fail(std::exception_ptr error) { fail(to_api_error(error)); }

http::Response json_response(std::string body, int status) {
  http::Response response;
  response.status = status;
  response.body = std::move(body);
  return response;
}

void check_batch_size(std::size_t inputs, std::size_t max_inputs) {
  if (inputs == 0)
    throw ApiError(ApiErrorKind::kValidation, "inputs cannot be an empty list", "inputs");
  if (inputs > max_inputs)
    throw ApiError(ApiErrorKind::kTooManyInputs,
                   "batch size " + std::to_string(inputs) + " > maximum allowed batch size " +
                       std::to_string(max_inputs),
                   "inputs");
}

void submit_and_reply(runtime::InferenceService& service, runtime::InferenceRequest request,
                      Reply reply, Formatter format) {
  service.submit(std::move(request), [reply, format = std::move(format)](
                                         runtime::InferenceResult result) mutable {
    try {
      if (result.error) std::rethrow_exception(result.error);
      for (const auto& item : result.items)
        for (const float v : item.values)
          if (!std::isfinite(v))
            throw ApiError(ApiErrorKind::kBackend, "the model produced NaN or Inf for this input");
      reply.send(format(result));
    } catch (...) {
      reply.fail(std::current_exception());
    }
  });
}

}  // namespace onepass::api
