// What a gRPC dialect (kserve_grpc/, tei_grpc/) gives the shared server (server.h): a service's
// full name and its method table, each method a handler of one request message that answers
// through an Answer. The server does the rest for every service alike: the API key, draining,
// the call's log line, request metric and span (CallRecord), and the order of a stream's answers
// (stream_call.h).
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "api/common/call.h"
#include "api/grpc_server/status.h"
#include "http2/hpack.h"
#include "runtime/service.h"
#include "trace/context.h"

namespace onepass::api::grpc_server {

// Which calls skip the API key and answer while draining (REST's open health routes).
enum class Access { kClosed, kLiveness, kReadiness };

// How many messages a method reads and writes.
enum class Shape {
  kUnary,         // one request, one answer
  kBidiStream,    // a stream of requests, one answer each, in the requests' order
  kClientStream,  // a stream of requests, one answer for them all
};

// What every service's handlers share: the runtime, the HTTP API's options (API key, batch
// limits) and model folders, and whether the server is draining.
struct ServiceContext {
  runtime::InferenceService& service;
  const ApiOptions& options;
  ModelUrls& model_urls;
  const std::atomic<bool>& draining;
};

// What a handler sees of its call: the client's metadata (request headers that are not
// pseudo-headers) and the deadline its grpc-timeout set.
class CallContext {
 public:
  CallContext(std::vector<http2::Header> metadata, std::chrono::system_clock::time_point deadline)
      : metadata_(std::move(metadata)), deadline_(deadline) {}
  // The value of the metadata `key` (lower case), or nullptr.
  const std::string* metadata(std::string_view key) const;
  // time_point::max() when the client set none.
  std::chrono::system_clock::time_point deadline() const { return deadline_; }

 private:
  std::vector<http2::Header> metadata_;
  std::chrono::system_clock::time_point deadline_;
};

// One call's log line, request metric and server span, written when it finishes (as REST's
// Reply does): the method as its route label ("grpc:<Method>"), the model, the status (with
// REST's code beside it, so that the request metrics stay one family), the latency, the request
// id and, while tracing (docs/tracing.md), the trace id of a span named
// "<service>/<Method>" that is a child of the caller's `traceparent` metadata.
class CallRecord {
 public:
  CallRecord(runtime::InferenceService& service, std::string_view service_name, const char* dialect,
             const char* method, const CallContext& context);
  // The id the call's log line carries: the client's x-request-id or a new one, sent back as
  // initial metadata.
  const std::string& request_id() const { return request_id_; }
  // The call's span context: the runtime's spans of its requests are its children.
  const trace::SpanContext& trace_context() const { return trace_; }
  // The first model named; later ones (a stream's) are the same or refused before.
  void set_model(const std::string& model);
  // Adds a request's inputs and tokens (a stream's messages add up). Thread-safe.
  void add_inference(std::size_t inputs, std::size_t tokens) {
    inputs_ += inputs;
    tokens_ += tokens;
  }
  void finish(const CallStatus& status);

 private:
  void start_trace(const CallContext& context);
  void record_span(const CallStatus& status);

  runtime::InferenceService& service_;
  std::string_view service_name_;
  const char* dialect_;
  const char* method_;
  std::chrono::steady_clock::time_point start_;
  trace::SpanContext trace_;
  trace::SpanId parent_span_id_{};
  bool parent_remote_ = false;
  std::string request_id_;
  std::string model_;
  std::atomic<std::size_t> inputs_{0};
  std::atomic<std::size_t> tokens_{0};
};

class StreamCall;
struct Slot;

// The answer to one request message: respond() or fail() once, from any thread (a second
// answer is ignored). Copyable, so a runtime completion can hold it; the call lives until every
// message's answer is given.
class Answer {
 public:
  Answer(std::shared_ptr<StreamCall> call, std::shared_ptr<Slot> slot)
      : call_(std::move(call)), slot_(std::move(slot)) {}
  void respond(std::string message) const;
  void fail(const CallStatus& status) const;
  void fail(std::exception_ptr error) const { fail(status_of(error)); }
  CallRecord& record() const;
  const CallContext& context() const;
  // The deadline of the call has passed.
  bool past_deadline() const;
  // Ties a runtime request to this call: its spans become the call's children and the runtime
  // drops it once the call's deadline passes. False, the message failed DEADLINE_EXCEEDED, when
  // that deadline has passed already.
  bool prepare(runtime::InferenceRequest& request) const;
  // A runtime result for this call: adds its inputs and tokens to the call's record and throws
  // its error (or kBackend for a NaN or Inf value). False, the message failed
  // DEADLINE_EXCEEDED, when the deadline passed meanwhile: the answer is not worth encoding.
  bool accept(const runtime::InferenceResult& result) const;

 private:
  std::shared_ptr<StreamCall> call_;
  std::shared_ptr<Slot> slot_;
};

struct Method {
  const char* name;  // "ModelInfer": the full name is "/<service>/<name>"
  Access access = Access::kClosed;
  Shape shape = Shape::kUnary;
  // kUnary and kBidiStream: called once per request message, on its connection's strand, in
  // order; it answers through `answer` (now or from the runtime's completion) or throws, which
  // fails the message with status_of().
  std::function<void(const Answer& answer, std::string_view request)> handle;
  // kClientStream: called once with every message read.
  std::function<void(const Answer& answer, const std::vector<std::string>& requests)> handle_all;
  // kClientStream: past this many messages (0: no limit) reading stops and handle_all gets
  // them, one too many, to refuse.
  std::size_t max_messages = 0;
};

struct ServiceTable {
  std::string name;     // "inference.GRPCInferenceService", "tei.v1.Embed"
  const char* dialect;  // the span's onepass.dialect: "kserve-grpc", "tei-grpc"
  std::vector<Method> methods;
};

}  // namespace onepass::api::grpc_server
