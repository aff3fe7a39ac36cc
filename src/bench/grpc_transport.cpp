// The gRPC transport (transport.h): gRPC's generic stub, so the bench needs no generated code
// (the dialects write and read the messages with protowire). The workers of a run share one
// channel to the target, so their calls in flight are multiplexed over one HTTP/2 connection,
// as a gRPC client's calls are (tritonclient's cached channels, one grpc-js client), where
// HTTP/1.1 needs a connection per request in flight. Each worker waits for its one call on a
// completion queue of its own.
#include <absl/synchronization/mutex.h>
#include <grpcpp/channel.h>
#include <grpcpp/client_context.h>
#include <grpcpp/create_channel.h>
#include <grpcpp/generic/generic_stub.h>
#include <grpcpp/security/credentials.h>
#include <grpcpp/support/byte_buffer.h>
#include <grpcpp/support/channel_arguments.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <map>
#include <mutex>

#include "base/error.h"
#include "bench/transport.h"

namespace onepass::bench {
namespace {

using Clock = std::chrono::system_clock;

std::atomic<std::uint64_t> request_ids{0};  // x-request-id: unique over the process

const char* status_name(grpc::StatusCode code) {
  switch (code) {
    case grpc::StatusCode::OK:
      return "OK";
    case grpc::StatusCode::CANCELLED:
      return "CANCELLED";
    case grpc::StatusCode::UNKNOWN:
      return "UNKNOWN";
    case grpc::StatusCode::INVALID_ARGUMENT:
      return "INVALID_ARGUMENT";
    case grpc::StatusCode::DEADLINE_EXCEEDED:
      return "DEADLINE_EXCEEDED";
    case grpc::StatusCode::NOT_FOUND:
      return "NOT_FOUND";
    case grpc::StatusCode::ALREADY_EXISTS:
      return "ALREADY_EXISTS";
    case grpc::StatusCode::PERMISSION_DENIED:
      return "PERMISSION_DENIED";
    case grpc::StatusCode::UNAUTHENTICATED:
      return "UNAUTHENTICATED";
    case grpc::StatusCode::RESOURCE_EXHAUSTED:
      return "RESOURCE_EXHAUSTED";
    case grpc::StatusCode::FAILED_PRECONDITION:
      return "FAILED_PRECONDITION";
    case grpc::StatusCode::ABORTED:
      return "ABORTED";
    case grpc::StatusCode::OUT_OF_RANGE:
      return "OUT_OF_RANGE";
    case grpc::StatusCode::UNIMPLEMENTED:
      return "UNIMPLEMENTED";
    case grpc::StatusCode::INTERNAL:
      return "INTERNAL";
    case grpc::StatusCode::UNAVAILABLE:
      return "UNAVAILABLE";
    case grpc::StatusCode::DATA_LOSS:
      return "DATA_LOSS";
    default:
      return "UNKNOWN";
  }
}

grpc::ByteBuffer to_buffer(const std::string& message) {
  grpc::Slice slice(message);
  return grpc::ByteBuffer(&slice, 1);
}

std::string from_buffer(const grpc::ByteBuffer& buffer) {
  std::vector<grpc::Slice> slices;
  std::string out;
  if (!buffer.Dump(&slices).ok()) return out;
  out.reserve(buffer.Length());
  for (const auto& s : slices) out.append(reinterpret_cast<const char*>(s.begin()), s.size());
  return out;
}

std::string lower(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return text;
}

// The channel to `target` while a transport holds it, else a new one: a run's workers share
// one, which goes with the last of them.
std::shared_ptr<grpc::Channel> shared_channel(const std::string& target) {
  static std::mutex mutex;
  static std::map<std::string, std::weak_ptr<grpc::Channel>> channels;
  std::lock_guard lock(mutex);
  std::shared_ptr<grpc::Channel> channel = channels[target].lock();
  if (!channel) {
    grpc::ChannelArguments args;
    args.SetMaxReceiveMessageSize(-1);
    args.SetMaxSendMessageSize(-1);
    args.SetInt(GRPC_ARG_ENABLE_RETRIES, 0);  // nothing to buffer for a resend
    channel = grpc::CreateCustomChannel(target, grpc::InsecureChannelCredentials(), args);
    channels[target] = channel;
  }
  return channel;
}

class GrpcTransport final : public Transport {
 public:
  GrpcTransport(const std::string& target, std::chrono::milliseconds timeout) : timeout_(timeout) {
    // Debian builds Abseil without NDEBUG: gRPC's every lock would search a lock-order graph.
    absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);
    channel_ = shared_channel(target);
    stub_ = std::make_unique<grpc::GenericStub>(channel_);
  }

  ~GrpcTransport() override {
    queue_.Shutdown();
    void* tag = nullptr;
    bool ok = false;
    while (queue_.Next(&tag, &ok)) {
    }
  }

  // Until the channel is connected or has failed to (nothing listening: at once, as a refused
  // TCP connect over HTTP), at most --timeout; a failure is counted by the calls.
  void connect() override {
    const Clock::time_point deadline = Clock::now() + timeout_;
    grpc_connectivity_state state = channel_->GetState(true);
    while (state != GRPC_CHANNEL_READY && state != GRPC_CHANNEL_TRANSIENT_FAILURE &&
           state != GRPC_CHANNEL_SHUTDOWN) {
      if (!channel_->WaitForStateChange(state, deadline)) return;
      state = channel_->GetState(true);
    }
  }

  std::size_t retries() const override { return 0; }

  Outcome exchange(const Dialect& dialect, std::span<const Sample* const> batch,
                   Task task) override {
    Outcome outcome;
    const GrpcRequest request = dialect.build_grpc(batch, task);
    grpc::ClientContext context;
    const Clock::time_point deadline = Clock::now() + timeout_;
    context.set_deadline(deadline);
    for (const auto& [name, value] : dialect.options().headers) {
      const std::string key = lower(name);
      if (key == "content-type" || key == "accept") continue;
      context.AddMetadata(key, value);
    }
    context.AddMetadata("x-request-id", "onepass-bench-" + std::to_string(++request_ids));
    std::vector<std::string> answers;
    const grpc::Status status = request.messages.size() == 1 ? unary(context, request, answers)
                                                             : stream(context, request, answers);
    if (!status.ok()) {
      const grpc::StatusCode code = status.error_code();
      if (code == grpc::StatusCode::DEADLINE_EXCEEDED && Clock::now() >= deadline) {
        outcome.error = "timeout";
      } else if (code == grpc::StatusCode::UNAVAILABLE &&
                 channel_->GetState(false) != GRPC_CHANNEL_READY) {
        outcome.error = "connect";  // nothing answers at the address
      } else {
        outcome.error = status_name(code);
        outcome.error_message = status.error_message();
      }
      return outcome;
    }
    try {
      outcome.answers = dialect.parse_grpc(answers, batch.size(), task);
    } catch (const Error&) {
      outcome.error = "bad_response";
    }
    return outcome;
  }

 private:
  // Waits for the one operation in flight on this worker's queue.
  bool wait() {
    void* tag = nullptr;
    bool ok = false;
    if (!queue_.Next(&tag, &ok)) return false;
    return ok;
  }

  grpc::Status unary(grpc::ClientContext& context, const GrpcRequest& request,
                     std::vector<std::string>& answers) {
    const grpc::ByteBuffer message = to_buffer(request.messages.front());
    auto call = stub_->PrepareUnaryCall(&context, request.method, message, &queue_);
    call->StartCall();
    grpc::ByteBuffer response;
    grpc::Status status;
    call->Finish(&response, &status, this);
    wait();
    if (status.ok()) answers.push_back(from_buffer(response));
    return status;
  }

  // Every message written, then every answer read: the server answers a stream in order.
  grpc::Status stream(grpc::ClientContext& context, const GrpcRequest& request,
                      std::vector<std::string>& answers) {
    auto call = stub_->PrepareCall(&context, request.method, &queue_);
    call->StartCall(this);
    bool open = wait();
    for (std::size_t i = 0; open && i < request.messages.size(); ++i) {
      const grpc::ByteBuffer message = to_buffer(request.messages[i]);
      call->Write(message, this);
      open = wait();
    }
    if (open) {
      call->WritesDone(this);
      wait();
    }
    for (;;) {
      grpc::ByteBuffer response;
      call->Read(&response, this);
      if (!wait()) break;
      answers.push_back(from_buffer(response));
    }
    grpc::Status status;
    call->Finish(&status, this);
    wait();
    return status;
  }

  std::chrono::milliseconds timeout_;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<grpc::GenericStub> stub_;
  grpc::CompletionQueue queue_;
};

}  // namespace

std::unique_ptr<Transport> open_grpc_transport(const std::string& target,
                                               std::chrono::milliseconds timeout) {
  return std::make_unique<GrpcTransport>(target, timeout);
}

}  // namespace onepass::bench
