#include "api/grpc_server/stream_call.h"

#include <boost/asio/post.hpp>
#include <utility>

#include "api/grpc_server/connection.h"
#include "protowire/grpc_frame.h"

namespace onepass::api::grpc_server {

namespace {

using protowire::kGrpcPrefixBytes;

// grpc-message is percent-encoded (the gRPC HTTP/2 protocol): every byte outside printable
// ASCII, and '%' itself.
std::string percent_encoded(std::string_view message) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  out.reserve(message.size());
  for (const char c : message) {
    const auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u > 0x7e || u == '%') {
      out.push_back('%');
      out.push_back(kHex[u >> 4]);
      out.push_back(kHex[u & 0xf]);
    } else {
      out.push_back(c);
    }
  }
  return out;
}

}  // namespace

StreamCall::StreamCall(std::weak_ptr<Connection> connection, Strand strand, std::uint32_t stream,
                       CallContext context, runtime::InferenceService& service,
                       const ServiceTable& table, const Method& method,
                       std::size_t max_message_bytes, std::atomic<std::size_t>& live)
    : connection_(std::move(connection)),
      strand_(std::move(strand)),
      stream_(stream),
      context_(std::move(context)),
      record_(service, table.name, table.dialect, method.name, context_),
      method_(method),
      max_message_bytes_(max_message_bytes),
      live_(live) {
  ++live_;
}

StreamCall::~StreamCall() { --live_; }

void StreamCall::start(const std::function<void()>& admit) {
  try {
    admit();
  } catch (...) {
    finish(status_of(std::current_exception()));
  }
}

void StreamCall::on_data(std::string_view data, bool end) {
  if (finished_) return;
  inbound_.append(data);
  remote_done_ = remote_done_ || end;
  // Data taken in reopens the stream's window at once (a message may be larger than the
  // window), except while a stream is paused: then the window stays shut and holds the client.
  if (paused_)
    held_bytes_ += data.size();
  else
    give_back(data.size());
  read_messages();
}

void StreamCall::give_back(std::size_t bytes) {
  if (bytes == 0) return;
  if (auto connection = connection_.lock()) {
    connection->session().consumed(stream_, bytes);
    connection->flush_output();
  }
}

void StreamCall::on_reset() {
  if (finished_) return;
  broken_ = true;
  reading_done_ = true;
  inbound_.clear();
  pump();
}

void StreamCall::read_messages() {
  std::size_t pos = 0;
  while (!finished_ && !reading_done_) {
    if (method_.shape == Shape::kBidiStream && queue_.size() >= kStreamWindow) {
      paused_ = true;  // pump() reads on once the answers due have been written
      break;
    }
    if (inbound_.size() - pos < kGrpcPrefixBytes) break;
    const bool compressed = inbound_[pos] != 0;
    const std::size_t length = protowire::grpc_frame_length(inbound_.data() + pos);
    if (compressed) {
      refuse({StatusCode::kUnimplemented, "compressed messages are not supported", 415});
      break;
    }
    if (length > max_message_bytes_) {
      refuse({StatusCode::kResourceExhausted,
              "the request message (" + std::to_string(length) + " bytes) is larger than " +
                  std::to_string(max_message_bytes_) + " bytes",
              413});
      break;
    }
    if (inbound_.size() - pos - kGrpcPrefixBytes < length) break;
    const std::string_view message(inbound_.data() + pos + kGrpcPrefixBytes, length);
    pos += kGrpcPrefixBytes + length;
    deliver(message);
  }
  if (reading_done_) {
    inbound_.clear();
  } else {
    inbound_.erase(0, pos);
  }
  if (remote_done_ && !reading_done_ && !paused_) end_of_requests();
}

void StreamCall::deliver(std::string_view message) {
  std::shared_ptr<Slot> slot;
  if (method_.shape == Shape::kClientStream) {
    collected_.emplace_back(message);
    // Past the method's limit: no more are read, and the handler refuses them all.
    if (method_.max_messages == 0 || collected_.size() <= method_.max_messages) return;
    reading_done_ = true;
    slot = push();
  } else {
    slot = push();
    if (method_.shape == Shape::kUnary) reading_done_ = true;
  }
  const Answer answer(shared_from_this(), slot);
  try {
    if (method_.shape == Shape::kClientStream)
      method_.handle_all(answer, collected_);
    else
      method_.handle(answer, message);
  } catch (...) {
    answer.fail(std::current_exception());
  }
}

void StreamCall::end_of_requests() {
  reading_done_ = true;
  if (!inbound_.empty()) {
    inbound_.clear();
    refuse({StatusCode::kInvalidArgument, "the stream ended inside a message", 400});
    return;
  }
  if (!dispatched_ && method_.shape == Shape::kUnary) {
    refuse({StatusCode::kInvalidArgument, "the call carried no request", 400});
    return;
  }
  if (!dispatched_ && method_.shape == Shape::kClientStream) {
    const Answer answer(shared_from_this(), push());
    try {
      method_.handle_all(answer, collected_);
    } catch (...) {
      answer.fail(std::current_exception());
    }
    return;
  }
  pump();
}

std::shared_ptr<Slot> StreamCall::push() {
  auto slot = std::make_shared<Slot>();
  queue_.push_back(slot);
  ++outstanding_;
  dispatched_ = true;
  return slot;
}

void StreamCall::refuse(CallStatus status) {
  reading_done_ = true;
  const std::shared_ptr<Slot> slot = push();
  settle(*slot, false, {}, std::move(status));
}

void StreamCall::answer(const std::shared_ptr<Slot>& slot, bool ok, std::string message,
                        CallStatus status) {
  boost::asio::post(strand_, [self = shared_from_this(), slot, ok, message = std::move(message),
                              status = std::move(status)]() mutable {
    self->settle(*slot, ok, std::move(message), std::move(status));
  });
}

void StreamCall::settle(Slot& slot, bool ok, std::string message, CallStatus status) {
  if (slot.done || finished_) return;
  slot.done = true;
  slot.ok = ok;
  slot.message = std::move(message);
  slot.status = std::move(status);
  --outstanding_;
  if (!ok) reading_done_ = true;
  pump();
}

void StreamCall::pump() {
  while (!finished_) {
    if (!queue_.empty() && queue_.front()->done) {
      Slot& front = *queue_.front();
      if (front.ok && !broken_ && front.message.size() > max_message_bytes_) {
        front.ok = false;
        front.status = {StatusCode::kResourceExhausted,
                        "the answer (" + std::to_string(front.message.size()) +
                            " bytes) is larger than " + std::to_string(max_message_bytes_) +
                            " bytes",
                        500};
        reading_done_ = true;
      }
      if (front.ok && !broken_) {
        write_message(front.message);
        queue_.pop_front();
        if (method_.shape != Shape::kBidiStream) return finish({});
        continue;
      }
      if (outstanding_ > 0) return;  // answers still owed hold the call
      return finish(broken_ ? CallStatus{StatusCode::kCancelled, "the client left", 499}
                            : front.status);
    }
    if (queue_.empty() && reading_done_ && outstanding_ == 0)
      return finish(broken_ ? CallStatus{StatusCode::kCancelled, "the client left", 499}
                            : CallStatus{});
    break;
  }
  if (paused_ && !finished_ && queue_.size() < kStreamWindow) {
    paused_ = false;
    give_back(std::exchange(held_bytes_, 0));
    read_messages();
  }
}

std::vector<http2::Header> StreamCall::initial_metadata() const {
  return {{":status", "200"},
          {"content-type", "application/grpc"},
          {"x-request-id", record_.request_id()}};
}

void StreamCall::write_message(const std::string& message) {
  const auto connection = connection_.lock();
  if (!connection) return;
  http2::Session& session = connection->session();
  if (!headers_sent_) {
    session.send_headers(stream_, initial_metadata());
    headers_sent_ = true;
  }
  session.send_data(stream_, protowire::grpc_framed(message));
  connection->flush_output();
}

void StreamCall::finish(const CallStatus& status) {
  finished_ = true;
  reading_done_ = true;
  record_.finish(status);
  const auto connection = connection_.lock();
  if (!connection) return;
  // Without a message written first, the status goes in a headers-only response.
  std::vector<http2::Header> trailers;
  if (!headers_sent_) trailers = initial_metadata();
  trailers.push_back({"grpc-status", std::to_string(static_cast<int>(status.code))});
  if (!status.message.empty())
    trailers.push_back({"grpc-message", percent_encoded(status.message)});
  connection->session().send_trailers(stream_, trailers);
  connection->flush_output();
  connection->forget(stream_);
}

}  // namespace onepass::api::grpc_server
