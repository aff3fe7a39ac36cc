#include "api/grpc_server/call.h"

#include <grpcpp/support/byte_buffer.h>

#include <cmath>
#include <deque>
#include <mutex>
#include <optional>

#include "api/common/api_error.h"
#include "base/log.h"
#include "trace/tracer.h"

namespace onepass::api::grpc_server {

namespace {

const std::string* metadata(const grpc::ServerContextBase& context, std::string_view key,
                            std::string& storage) {
  const auto& all = context.client_metadata();
  const auto it = all.find(grpc::string_ref(key.data(), key.size()));
  if (it == all.end()) return nullptr;
  storage.assign(it->second.data(), it->second.size());
  return &storage;
}

}  // namespace

CallRecord::CallRecord(runtime::InferenceService& service, std::string_view service_name,
                       const char* dialect, const char* method, grpc::ServerContextBase& context)
    : service_(service),
      service_name_(service_name),
      dialect_(dialect),
      method_(method),
      start_(std::chrono::steady_clock::now()) {
  std::string header;
  request_id_ = log::request_id_from(metadata(context, "x-request-id", header));
  context.AddInitialMetadata("x-request-id", request_id_);
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
        .add("grpc_status", static_cast<int>(status.status.error_code()))
        .add_ms("latency_ms", latency);
    if (inputs_ > 0) fields.add("inputs", inputs_.load()).add("tokens", tokens_.load());
    if (!status.status.ok()) fields.add("error", status.status.error_message());
    if (trace_.valid()) fields.add("trace_id", trace::to_hex(trace_.trace_id));
    log::write(level, "request", fields);
  } catch (...) {
    // Nor may a log line.
  }
}

void CallRecord::start_trace(const grpc::ServerContextBase& context) {
  try {
    std::string header, state;
    const std::optional<trace::SpanContext> parent = trace::caller_context(
        metadata(context, "traceparent", header), metadata(context, "tracestate", state));
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
        .set("rpc.grpc.status_code", static_cast<int>(status.status.error_code()))
        .set("onepass.dialect", dialect_);
    if (!model_.empty()) span.set("gen_ai.request.model", model_);
    if (!request_id_.empty()) span.set("onepass.request_id", request_id_);
    if (inputs_ > 0)
      span.set("onepass.inputs", inputs_.load()).set("gen_ai.usage.input_tokens", tokens_.load());
    if (!status.status.ok()) {
      span.set("error.type", std::to_string(static_cast<int>(status.status.error_code())));
      if (status.http_status >= 500) {
        span.status = trace::StatusCode::kError;
        span.status_message = status.status.error_message();
      } else {
        span.set("onepass.error.message", status.status.error_message());
      }
    }
    tracer->record(std::move(span));
  } catch (...) {
    // Never the answer's problem.
  }
}

// One request message's answer, waiting its turn to be written.
struct Slot {
  bool done = false;
  bool ok = false;
  std::string message;
  CallStatus status;
};

// One call of any method and shape, on the async generic service. Each request message read
// gets a Slot at the back of the queue and goes to the method's handler; answers may come in
// any order from any thread, and are written from the front of the queue, one write at a time
// (gRPC allows one in flight). A failed message ends the call with its status once the answers
// before it are written and every answer still owed has come back: the messages after it are
// not read, and their answers are dropped.
//
// Its operations' events come back on the completion queue it was accepted on, whose one
// thread calls complete(); answers start writes from the thread that gives them. `ops_` counts
// the operations started and not yet come back: the call deletes itself, on the queue's thread,
// when it is finished and none is left.
class Reactor {
 public:
  // A bidi stream reads no further while this many of its answers are pending (in the runtime
  // or not yet written): the client waits, as TCP's window makes it, instead of flooding the
  // queue past admission.
  static constexpr std::size_t kStreamWindow = 64;

  Reactor(Accepted accepted, runtime::InferenceService& service, const ServiceTable& table,
          const Method& method, const std::function<void()>& admit, std::atomic<std::size_t>& live)
      : live_(live),
        context_(std::move(accepted.context)),
        stream_(std::move(accepted.stream)),
        record_(service, table.name, table.dialect, method.name, *context_),
        method_(method) {
    // No other thread knows the call yet, and its events wait for this thread: no lock.
    try {
      admit();
    } catch (...) {
      finished_ = true;
      ++ops_;
      const CallStatus status = status_of(std::current_exception());
      record_.finish(status);
      stream_->Finish(status.status, &finish_event_);
      return;
    }
    ++ops_;
    stream_->Read(&request_, &read_event_);
  }

  CallRecord& record() { return record_; }
  const grpc::ServerContextBase& context() const { return *context_; }

  // From any thread. The answer and what it makes due are one critical section.
  void answer(Slot& slot, bool ok, std::string message, const CallStatus& status) {
    std::unique_lock lock(mutex_);
    if (slot.done) return;
    slot.done = true;
    slot.ok = ok;
    slot.message = std::move(message);
    slot.status = status;
    --outstanding_;
    if (!ok) stop_reading_ = true;
    pump(std::move(lock));
  }

 private:
  // One kind of operation's tag: at most one read, one write and one finish are in flight.
  struct OpEvent final : Event {
    OpEvent(Reactor* reactor, void (Reactor::*on_done)(bool))
        : reactor(reactor), on_done(on_done) {}
    void done(bool ok) override { reactor->complete(on_done, ok); }
    Reactor* reactor;
    void (Reactor::*on_done)(bool);
  };

  // An operation came back, on the queue's thread: its handler, then the end of the call once
  // nothing more can come back.
  void complete(void (Reactor::*on_done)(bool), bool ok) {
    (this->*on_done)(ok);
    std::unique_lock lock(mutex_);
    const bool over = --ops_ == 0 && finished_;
    lock.unlock();
    if (over) delete this;
  }

  void on_read_done(bool ok) {
    std::shared_ptr<Slot> slot;
    std::string_view bytes;
    grpc::Slice slice;
    {
      std::lock_guard lock(mutex_);
      if (finished_) return;
      if (!ok) {
        reading_done_ = true;
        if (method_.shape == Shape::kUnary && !dispatched_) {
          slot = push();
          slot->done = true;
          --outstanding_;
          slot->status = {
              grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, "the call carried no request"), 400};
        } else if (method_.shape == Shape::kClientStream && !dispatched_) {
          slot = push();
        }
      } else if (!request_.DumpToSingleSlice(&slice).ok()) {
        slot = push();
        slot->done = true;
        --outstanding_;
        slot->status = {grpc::Status(grpc::StatusCode::INTERNAL, "the request could not be read"),
                        500};
        stop_reading_ = true;
      } else {
        bytes = std::string_view(reinterpret_cast<const char*>(slice.begin()), slice.size());
        if (method_.shape == Shape::kClientStream) {
          collected_.emplace_back(bytes);
          // Past the method's limit: no more are read, and the handler refuses them all.
          if (method_.max_messages > 0 && collected_.size() > method_.max_messages) {
            stop_reading_ = true;
            slot = push();
          }
        } else {
          slot = push();
        }
      }
    }
    if (slot && !slot->done) {
      const Answer answer(this, slot);
      try {
        if (method_.shape == Shape::kClientStream)
          method_.handle_all(answer, collected_);
        else
          method_.handle(answer, bytes);
      } catch (...) {
        answer.fail(std::current_exception());
      }
    }
    std::unique_lock lock(mutex_);
    bool read_on = false;
    if (ok && !finished_ && !reading_done_) {
      if (method_.shape == Shape::kUnary || stop_reading_) {
        reading_done_ = true;
      } else if (queue_.size() >= kStreamWindow) {
        read_paused_ = true;  // pump() reads on once the answers due have been written
      } else {
        read_on = true;
        ++ops_;
      }
    }
    if (read_on) stream_->Read(&request_, &read_event_);  // under the lock: before any finish
    pump(std::move(lock));
  }

  void on_write_done(bool ok) {
    std::unique_lock lock(mutex_);
    writing_ = false;
    if (!ok) broken_ = true;  // the client is gone: nothing more can be written
    pump(std::move(lock));
  }

  void on_finish_done(bool /*ok*/) {}

  // A new message's slot, under the lock.
  std::shared_ptr<Slot> push() {
    auto slot = std::make_shared<Slot>();
    queue_.push_back(slot);
    ++outstanding_;
    dispatched_ = true;
    return slot;
  }

  enum class Action { kNone, kWrite, kWriteAndFinish, kFinish };

  // What is due next, under the lock: the front answer written (and the call finished, unless
  // it is a bidi stream), or the call finished with its status once it is over. The operation
  // it starts is counted here.
  Action next(CallStatus& status) {
    if (finished_ || writing_) return Action::kNone;
    const CallStatus cancelled{grpc::Status(grpc::StatusCode::CANCELLED, "the client left"), 499};
    if (!queue_.empty() && queue_.front()->done) {
      Slot& front = *queue_.front();
      if (front.ok && !broken_) {
        grpc::Slice slice(front.message);
        response_ = grpc::ByteBuffer(&slice, 1);
        queue_.pop_front();
        ++ops_;
        if (method_.shape == Shape::kBidiStream) {
          writing_ = true;
          return Action::kWrite;
        }
        finished_ = true;
        return Action::kWriteAndFinish;
      }
      if (outstanding_ > 0) return Action::kNone;  // answers still owed hold the call
      status = broken_ ? cancelled : front.status;
      finished_ = true;
      ++ops_;
      return Action::kFinish;
    }
    if (queue_.empty() && reading_done_ && outstanding_ == 0) {
      if (broken_) status = cancelled;
      finished_ = true;
      ++ops_;
      return Action::kFinish;
    }
    return Action::kNone;
  }

  // Writes the next answer due, or finishes the call when it is over; reads on when a paused
  // stream has room again. Called with the lock held. The operations it starts keep `ops_`
  // above zero until they come back, so the call outlives this function.
  void pump(std::unique_lock<std::mutex> lock) {
    CallStatus status{grpc::Status::OK, 200};
    const Action action = next(status);
    if (read_paused_ && !finished_ && !stop_reading_ && queue_.size() < kStreamWindow) {
      read_paused_ = false;
      ++ops_;
      stream_->Read(&request_, &read_event_);
    }
    lock.unlock();
    switch (action) {
      case Action::kNone:
        return;
      case Action::kWrite:
        stream_->Write(response_, &write_event_);
        return;
      case Action::kWriteAndFinish:
        record_.finish(status);
        stream_->WriteAndFinish(response_, grpc::WriteOptions(), grpc::Status::OK, &finish_event_);
        return;
      case Action::kFinish:
        record_.finish(status);
        stream_->Finish(status.status, &finish_event_);
        return;
    }
  }

  // Counts the call among the server's live ones until the last of its members is gone: the
  // server shuts its queues once none is left (server.cpp).
  struct Live {
    explicit Live(std::atomic<std::size_t>& count) : count(count) { ++count; }
    ~Live() { --count; }
    std::atomic<std::size_t>& count;
  };

  Live live_;
  std::unique_ptr<grpc::GenericServerContext> context_;
  std::unique_ptr<grpc::GenericServerAsyncReaderWriter> stream_;
  CallRecord record_;
  const Method& method_;
  OpEvent read_event_{this, &Reactor::on_read_done};
  OpEvent write_event_{this, &Reactor::on_write_done};
  OpEvent finish_event_{this, &Reactor::on_finish_done};
  std::mutex mutex_;
  std::size_t ops_ = 0;  // operations started and not come back
  std::deque<std::shared_ptr<Slot>> queue_;
  std::size_t outstanding_ = 0;  // slots whose answer has not come
  std::vector<std::string> collected_;
  bool dispatched_ = false;
  bool reading_done_ = false;
  bool stop_reading_ = false;
  bool read_paused_ = false;  // a bidi stream with kStreamWindow answers pending reads no more
  bool writing_ = false;
  bool broken_ = false;
  bool finished_ = false;
  grpc::ByteBuffer request_;
  grpc::ByteBuffer response_;
};

void Answer::respond(std::string message) const {
  reactor_->answer(*slot_, true, std::move(message), {grpc::Status::OK, 200});
}

void Answer::fail(const CallStatus& status) const { reactor_->answer(*slot_, false, {}, status); }

CallRecord& Answer::record() const { return reactor_->record(); }

const grpc::ServerContextBase& Answer::context() const { return reactor_->context(); }

bool Answer::past_deadline() const {
  return std::chrono::system_clock::now() > reactor_->context().deadline();
}

bool Answer::prepare(runtime::InferenceRequest& request) const {
  request.trace = record().trace_context();
  request.deadline = runtime::steady_deadline(context().deadline());
  if (!past_deadline()) return true;
  fail(
      {grpc::Status(grpc::StatusCode::DEADLINE_EXCEEDED, "the deadline passed before the call ran"),
       504});
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
  fail({grpc::Status(grpc::StatusCode::DEADLINE_EXCEEDED, "the deadline passed while the call ran"),
        504});
  return false;
}

void serve_call(Accepted accepted, runtime::InferenceService& service, const ServiceTable& table,
                const Method& method, const std::function<void()>& admit,
                std::atomic<std::size_t>& live) {
  new Reactor(std::move(accepted), service, table, method, admit, live);
}

void serve_unknown(Accepted accepted, runtime::InferenceService& service, const std::string& served,
                   std::atomic<std::size_t>& live) {
  static const ServiceTable kNone{"", "grpc", {}};
  static const Method kUnknown{"unknown", Access::kLiveness, Shape::kUnary, {}, {}, 0};
  serve_call(
      std::move(accepted), service, kNone, kUnknown,
      [&served] {
        throw ApiError(ApiErrorKind::kMethodNotAllowed, "no such method: onepass serves " + served);
      },
      live);
}

}  // namespace onepass::api::grpc_server
