#include "api/grpc_server/call.h"

#include <cmath>
#include <optional>

#include "api/common/api_error.h"
#include "api/grpc_server/stream_call.h"
#include "base/log.h"
#include "trace/tracer.h"

namespace onepass::api::grpc_server {

const std::string* CallContext::metadata(std::string_view key) const {
  for (const auto& header : metadata_)
    if (header.name == key) return &header.value;
  return nullptr;
}

CallRecord::CallRecord(runtime::InferenceService& service, std::string_view service_name,
                       const char* dialect, const char* method, const CallContext& context)
    : service_(service),
      service_name_(service_name),
      dialect_(dialect),
      method_(method),
      start_(std::chrono::steady_clock::now()) {
  request_id_ = log::request_id_from(context.metadata("x-request-id"));
  if (trace::active() != nullptr) start_trace(context);
}

void CallRecord::set_model(const std::string& model) {
  if (model_.empty()) model_ = model;
}

void CallRecord::finish(const CallStatus& status) {
  const auto latency = std::chrono::steady_clock::now() - start_;
  try {
    service_.record_http_request(std::string("grpc:") + method_, model_, status.http_status,
                                 latency);
  } catch (...) {
    // Metrics must never turn an answered call into a failure.
  }
  record_span(status);
  const log::Level level = status.http_status >= 500   ? log::Level::kError
                           : status.http_status >= 400 ? log::Level::kWarn
                                                       : log::Level::kInfo;
  if (!log::enabled(level)) return;
  try {
    log::Fields fields;
    fields.add("request_id", request_id_)
        .add("method", "grpc")
        .add("route", method_)
        .add("model", model_)
        .add("status", status.http_status)
        .add("grpc_status", static_cast<int>(status.code))
        .add_ms("latency_ms", latency);
    if (inputs_ > 0) fields.add("inputs", inputs_.load()).add("tokens", tokens_.load());
    if (!status.ok()) fields.add("error", status.message);
    if (trace_.valid()) fields.add("trace_id", trace::to_hex(trace_.trace_id));
    log::write(level, "request", fields);
  } catch (...) {
    // Nor may a log line.
  }
}

void CallRecord::start_trace(const CallContext& context) {
  try {
    const std::optional<trace::SpanContext> parent =
        trace::caller_context(context.metadata("traceparent"), context.metadata("tracestate"));
    trace_ = trace::active()->start(parent ? &*parent : nullptr);
    if (parent) parent_span_id_ = parent->span_id;
    parent_remote_ = parent.has_value();
  } catch (...) {
    trace_ = {};  // the call goes on untraced
  }
}

// OpenTelemetry's RPC conventions: "{rpc.service}/{rpc.method}", rpc.system "grpc",
// rpc.grpc.status_code; a status REST would answer 5xx is an error.
void CallRecord::record_span(const CallStatus& status) {
  try {
    trace::Tracer* tracer = trace::active();
    if (tracer == nullptr || !trace_.sampled()) return;
    const std::string service(service_name_);
    trace::SpanData span = trace::span_of(trace_, parent_span_id_, service + "/" + method_, start_,
                                          std::chrono::steady_clock::now());
    span.parent_remote = parent_remote_;
    span.kind = trace::SpanKind::kServer;
    span.set("rpc.system", "grpc")
        .set("rpc.service", service)
        .set("rpc.method", method_)
        .set("rpc.grpc.status_code", static_cast<int>(status.code))
        .set("onepass.dialect", dialect_);
    if (!model_.empty()) span.set("gen_ai.request.model", model_);
    if (!request_id_.empty()) span.set("onepass.request_id", request_id_);
    if (inputs_ > 0)
      span.set("onepass.inputs", inputs_.load()).set("gen_ai.usage.input_tokens", tokens_.load());
    if (!status.ok()) {
      span.set("error.type", std::to_string(static_cast<int>(status.code)));
      if (status.http_status >= 500) {
        span.status = trace::StatusCode::kError;
        span.status_message = status.message;
      } else {
        span.set("onepass.error.message", status.message);
      }
    }
    tracer->record(std::move(span));
  } catch (...) {
    // Never the answer's problem.
  }
}

void Answer::respond(std::string message) const {
  call_->answer(slot_, true, std::move(message), {});
}

void Answer::fail(const CallStatus& status) const { call_->answer(slot_, false, {}, status); }

CallRecord& Answer::record() const { return call_->record(); }

const CallContext& Answer::context() const { return call_->context(); }

bool Answer::past_deadline() const {
  return std::chrono::system_clock::now() > call_->context().deadline();
}

bool Answer::prepare(runtime::InferenceRequest& request) const {
  request.trace = record().trace_context();
  request.deadline = runtime::steady_deadline(context().deadline());
  if (!past_deadline()) return true;
  fail({StatusCode::kDeadlineExceeded, "the deadline passed before the call ran", 504});
  return false;
}

bool Answer::accept(const runtime::InferenceResult& result) const {
  record().add_inference(result.items.size(), result.total_tokens);
  if (result.error) std::rethrow_exception(result.error);
  for (const auto& item : result.items)
    for (const float v : item.values)
      if (!std::isfinite(v))
        throw ApiError(ApiErrorKind::kBackend, "the model produced NaN or Inf for this input");
  if (!past_deadline()) return true;
  fail({StatusCode::kDeadlineExceeded, "the deadline passed while the call ran", 504});
  return false;
}

}  // namespace onepass::api::grpc_server
