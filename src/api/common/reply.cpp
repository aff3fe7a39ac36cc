#include "api/common/reply.h"

#include <atomic>
#include <cmath>

#include "base/log.h"

namespace onepass::api {

struct Reply::State {
  http::Respond respond;
  const DialectSpec* dialect;
  std::string route;
  std::string model;
  runtime::InferenceService* service;
  std::chrono::steady_clock::time_point start;
  std::string method;
  std::string request_id;
  std::size_t tokens = 0;
  std::size_t inputs = 0;
  std::chrono::nanoseconds queue{-1};
  std::atomic<bool> answered{false};
};

Reply::Reply(http::Respond respond, const DialectSpec& dialect, std::string route,
             runtime::InferenceService& service, std::chrono::steady_clock::time_point start)
    : state_(std::make_shared<State>()) {
  state_->respond = std::move(respond);
  state_->dialect = &dialect;
  state_->route = std::move(route);
  state_->service = &service;
  state_->start = start;
}

const DialectSpec& Reply::dialect() const { return *state_->dialect; }

void Reply::set_model(const std::string& name) { state_->model = name; }

const std::string& Reply::request_id() const { return state_->request_id; }

void Reply::set_request(std::string method, std::string request_id) {
  state_->method = std::move(method);
  state_->request_id = std::move(request_id);
}

void Reply::set_inference(std::size_t tokens, std::size_t inputs, std::chrono::nanoseconds queue) {
  state_->tokens = tokens;
  state_->inputs = inputs;
  state_->queue = queue;
}

void Reply::send(http::Response response) { finish(std::move(response), {}); }

void Reply::finish(http::Response response, std::string error) {
  if (state_->answered.exchange(true)) return;
  const int status = response.status;
  if (!state_->request_id.empty()) response.headers.push_back({"X-Request-Id", state_->request_id});
  state_->respond(std::move(response));
  const auto latency = std::chrono::steady_clock::now() - state_->start;
  try {
    state_->service->record_http_request(state_->route, state_->model, status, latency);
  } catch (...) {
    // Metrics must never turn an answered request into a failure.
  }
  // After the answer is on its way, so the line costs the client nothing.
  const log::Level level = status >= 500   ? log::Level::kError
                           : status >= 400 ? log::Level::kWarn
                                           : log::Level::kInfo;
  if (!log::enabled(level)) return;
  try {
    log::Fields fields;
    fields.add("request_id", state_->request_id)
        .add("method", state_->method)
        .add("route", state_->route)
        .add("model", state_->model)
        .add("status", status)
        .add_ms("latency_ms", latency);
    if (state_->inputs > 0) fields.add("inputs", state_->inputs).add("tokens", state_->tokens);
    if (state_->queue.count() >= 0) fields.add_ms("queue_ms", state_->queue);
    if (!error.empty()) fields.add("error", error);
    log::write(level, "request", fields);
  } catch (...) {
    // Nor may a log line.
  }
}

void Reply::json(std::string body, int status, std::vector<http::Header> headers) {
  http::Response response = json_response(std::move(body), status);
  response.headers = std::move(headers);
  send(std::move(response));
}

void Reply::fail(const ApiError& error) {
  finish(error_response(*state_->dialect, error), error.what());
}

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
      reply.set_inference(result.total_tokens, result.items.size(), result.timings.queue);
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
