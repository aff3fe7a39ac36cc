#include "api/common/reply.h"

#include <atomic>
#include <cmath>

#include "api/common/dialect.h"
#include "base/log.h"
#include "trace/tracer.h"

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
  trace::SpanContext trace;  // valid() while traced
  trace::SpanId parent_span_id{};
  bool parent_remote = false;
};

namespace {

// The server span of one request (OpenTelemetry's HTTP server conventions: "{method} {route}",
// http.request.method, http.route, http.response.status_code; a 5xx is an error, a 4xx the
// client's and only named by error.type).
void record_request_span(const Reply::State& state, int status, const std::string& error,
                         std::chrono::steady_clock::time_point end) {
  trace::Tracer* tracer = trace::active();
  if (tracer == nullptr) return;
  const bool routed = state.route != "unmatched" && state.route != "transport";
  trace::SpanData span =
      trace::span_of(state.trace, state.parent_span_id,
                     routed ? state.method + " " + state.route : state.method, state.start, end);
  span.parent_remote = state.parent_remote;
  span.kind = trace::SpanKind::kServer;
  span.set("http.request.method", state.method).set("http.response.status_code", status);
  if (routed) span.set("http.route", state.route);
  span.set("onepass.dialect", state.dialect->name);
  if (!state.model.empty()) span.set("gen_ai.request.model", state.model);
  if (!state.request_id.empty()) span.set("onepass.request_id", state.request_id);
  if (state.inputs > 0) {
    span.set("onepass.inputs", state.inputs).set("gen_ai.usage.input_tokens", state.tokens);
  }
  if (status >= 400) span.set("error.type", std::to_string(status));
  if (status >= 500) span.status = trace::StatusCode::kError;
  if (!error.empty()) {
    if (status >= 500)
      span.status_message = error;
    else
      span.set("onepass.error.message", error);
  }
  tracer->record(std::move(span));
}

}  // namespace

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

void Reply::start_trace(const http::Request& request) {
  try {
    start_trace_context(request);
  } catch (...) {
    state_->trace = {};  // the request goes on untraced
  }
}

void Reply::start_trace_context(const http::Request& request) {
  trace::Tracer* tracer = trace::active();
  if (tracer == nullptr) return;
  const std::optional<trace::SpanContext> parent =
      trace::caller_context(request.header("traceparent"), request.header("tracestate"));
  state_->trace = tracer->start(parent ? &*parent : nullptr);
  if (parent) {
    state_->parent_span_id = parent->span_id;
    state_->parent_remote = true;
  }
}

const trace::SpanContext& Reply::trace_context() const { return state_->trace; }

void Reply::record_child_span(std::string_view name, std::chrono::steady_clock::time_point start,
                              std::chrono::steady_clock::time_point end) const {
  try {
    trace::Tracer* tracer = trace::active();
    const trace::SpanContext& parent = state_->trace;
    if (tracer == nullptr || !parent.sampled()) return;
    trace::SpanData span = trace::child_span(parent, std::string(name), start, end);
    tracer->record(std::move(span));
  } catch (...) {
    // Never the answer's problem.
  }
}

void Reply::send(http::Response response) { finish(std::move(response), {}); }

void Reply::finish(http::Response response, std::string error) {
  if (state_->answered.exchange(true)) return;
  const int status = response.status;
  if (!state_->request_id.empty()) response.headers.push_back({"X-Request-Id", state_->request_id});
  state_->respond(std::move(response));
  const auto now = std::chrono::steady_clock::now();
  const auto latency = now - state_->start;
  if (state_->trace.sampled()) {
    try {
      record_request_span(*state_, status, error, now);
    } catch (...) {
      // Tracing never turns an answered request into a failure either.
    }
  }
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
    if (state_->trace.valid()) fields.add("trace_id", trace::to_hex(state_->trace.trace_id));
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

namespace {

// The field's name becomes a string only when the check fails: these run on every request.
void check_at_most(std::size_t items, std::size_t max_items, std::string_view field) {
  if (items > max_items)
    throw ApiError(ApiErrorKind::kTooManyInputs,
                   "batch size " + std::to_string(items) + " > maximum allowed batch size " +
                       std::to_string(max_items),
                   std::string(field));
}

}  // namespace

void check_batch_size(std::size_t inputs, std::size_t max_inputs) {
  if (inputs == 0)
    throw ApiError(ApiErrorKind::kValidation, "inputs cannot be an empty list", "inputs");
  check_at_most(inputs, max_inputs, "inputs");
}

void check_list_size(std::size_t items, std::size_t max_items, std::string_view field) {
  if (items == 0)
    throw ApiError(ApiErrorKind::kValidation,
                   "`" + std::string(field) + "` cannot be an empty list", std::string(field));
  check_at_most(items, max_items, field);
}

void submit_and_reply(runtime::InferenceService& service, runtime::InferenceRequest request,
                      Reply reply, Formatter format) {
  request.trace = reply.trace_context();
  service.submit(std::move(request), [reply, format = std::move(format)](
                                         runtime::InferenceResult result) mutable {
    try {
      reply.set_inference(result.total_tokens, result.items.size(), result.timings.queue);
      if (result.error) std::rethrow_exception(result.error);
      for (const auto& item : result.items)
        for (const float v : item.values)
          if (!std::isfinite(v))
            throw ApiError(ApiErrorKind::kBackend, "the model produced NaN or Inf for this input");
      if (!reply.trace_context().sampled()) {
        reply.send(format(result));
        return;
      }
      const auto start = std::chrono::steady_clock::now();
      http::Response response = format(result);
      reply.record_child_span("onepass.format", start, std::chrono::steady_clock::now());
      reply.send(std::move(response));
    } catch (...) {
      reply.fail(std::current_exception());
    }
  });
}

}  // namespace onepass::api
