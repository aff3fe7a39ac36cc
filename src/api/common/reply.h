// The answer side of one API call: it knows the dialect (for error bodies), the route label
// and the model (for the request metrics), and it is safe to copy into a completion callback
// that runs on a runtime thread. Sending writes the request's one log line (base/log.h): method,
// route, model, status, latency, tokens, inputs, queue time, request id, and for a refusal its
// error message; never a header or the body.
#pragma once

#include <chrono>
#include <exception>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "api/common/api_error.h"
#include "http/message.h"
#include "runtime/service.h"
#include "trace/context.h"

namespace onepass::api {

class Reply {
 public:
  // `dialect` is one of the static DialectSpecs of api.cpp's table; it outlives every Reply.
  Reply(http::Respond respond, const DialectSpec& dialect, std::string route,
        runtime::InferenceService& service, std::chrono::steady_clock::time_point start);

  const DialectSpec& dialect() const;
  void set_model(const std::string& name);
  // For the request log line (written once, when the answer is sent) and the X-Request-Id
  // header echoed on every answer. Set before the call can complete on another thread.
  void set_request(std::string method, std::string request_id);
  // The X-Request-Id this answer carries; dialects whose answers hold an "id" reuse it, so that
  // a client's id and the server's log line name the same request.
  const std::string& request_id() const;
  // What the runtime reports for an inference (tokens, inputs, queue time); called from the
  // completion before send().
  void set_inference(std::size_t tokens, std::size_t inputs, std::chrono::nanoseconds queue);

  // Tracing (docs/tracing.md), while a tracer is installed: the request's server span, a child
  // of the caller's `traceparent` (and `tracestate`) when the request carries a valid one. Its
  // trace id goes into the log line; when sampled, the span is recorded once the answer is sent.
  // Called before the call can complete on another thread.
  void start_trace(const http::Request& request);
  // The request span's context; not valid() when tracing is off.
  const trace::SpanContext& trace_context() const;
  // Records a sampled child span of the request span (a phase of the API layer itself); never
  // throws.
  void record_child_span(std::string_view name, std::chrono::steady_clock::time_point start,
                         std::chrono::steady_clock::time_point end) const;

  // Each of these answers the call; the first one wins, later ones are ignored.
  void send(http::Response response);
  void json(std::string body, int status = 200, std::vector<http::Header> headers = {});
  void fail(const ApiError& error);
  void fail(std::exception_ptr error);

  struct State;  // opaque; reply.cpp's helpers read it

 private:
  void start_trace_context(const http::Request& request);
  void finish(http::Response response, std::string error);
  std::shared_ptr<State> state_;
};

using Formatter = std::function<http::Response(runtime::InferenceResult& result)>;

// submit() with the shared completion path: a result carrying an error, a non-finite output
// value (the NaN guard, 424) or an exception in `format` becomes the dialect's error answer.
// Admission errors (429, 404, 503) are thrown to the caller, before anything is queued.
void submit_and_reply(runtime::InferenceService& service, runtime::InferenceRequest request,
                      Reply reply, Formatter format);

// 422 when more than `max_inputs`, 400/422 (validation) when zero.
void check_batch_size(std::size_t inputs, std::size_t max_inputs);
// The same for a request's list named `field`, in TEI's words: "`texts` cannot be an empty list",
// "batch size 40 > maximum allowed batch size 32".
void check_list_size(std::size_t items, std::size_t max_items, std::string_view field);

// JSON response with the given body.
http::Response json_response(std::string body, int status = 200);

}  // namespace onepass::api
