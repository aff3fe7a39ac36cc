// One gRPC call on one HTTP/2 stream, of any method and shape: it cuts the stream's data into
// gRPC messages (a flag byte and a 4-byte big-endian length before each), hands each to the
// method's handler, and writes the answers back in the requests' order, then the status as
// trailers. Answers may come in any order from any thread; they are settled on the
// connection's strand, where everything else about the call runs, so the call needs no lock.
//
// A failed message ends the call with its status once the answers before it are written and
// every answer still owed has come back: the messages after it are not read, and their answers
// are dropped.
#pragma once

#include <atomic>
#include <boost/asio/io_context.hpp>
#include <boost/asio/strand.hpp>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "api/grpc_server/call.h"

namespace onepass::api::grpc_server {

class Connection;

// One request message's answer, waiting its turn to be written.
struct Slot {
  bool done = false;
  bool ok = false;
  std::string message;
  CallStatus status;
};

using Strand = boost::asio::strand<boost::asio::io_context::executor_type>;

class StreamCall : public std::enable_shared_from_this<StreamCall> {
 public:
  // A bidi stream reads no further while this many of its answers are pending (in the runtime
  // or not yet written): its HTTP/2 window stays shut and the client waits, instead of
  // flooding the queue past admission. (Otherwise the window reopens as data comes, so that a
  // message larger than the window can arrive.)
  static constexpr std::size_t kStreamWindow = 64;

  // Counts the call among the server's live ones until it is destroyed: the server stops its
  // threads once none is left (server.cpp).
  StreamCall(std::weak_ptr<Connection> connection, Strand strand, std::uint32_t stream,
             CallContext context, runtime::InferenceService& service, const ServiceTable& table,
             const Method& method, std::size_t max_message_bytes, std::atomic<std::size_t>& live);
  ~StreamCall();

  // On the strand. Admits the call (`admit` throws to refuse it) and reads what came with it.
  void start(const std::function<void()>& admit);
  // On the strand: the stream's data, `end` once the client has sent everything.
  void on_data(std::string_view data, bool end);
  // On the strand: the client reset the stream or the connection is gone.
  void on_reset();

  // From any thread: settles `slot` on the strand.
  void answer(const std::shared_ptr<Slot>& slot, bool ok, std::string message, CallStatus status);

  bool finished() const { return finished_; }
  CallRecord& record() { return record_; }
  const CallContext& context() const { return context_; }

 private:
  void read_messages();
  // Reopens `bytes` of the stream's HTTP/2 window.
  void give_back(std::size_t bytes);
  void deliver(std::string_view message);
  void end_of_requests();
  // A new message's slot.
  std::shared_ptr<Slot> push();
  // A message refused before its handler saw it.
  void refuse(CallStatus status);
  void settle(Slot& slot, bool ok, std::string message, CallStatus status);
  // Writes the answers due, or finishes the call once it is over; reads on when a paused
  // stream has room again.
  void pump();
  void write_message(const std::string& message);
  void finish(const CallStatus& status);
  std::vector<http2::Header> initial_metadata() const;

  std::weak_ptr<Connection> connection_;
  Strand strand_;
  std::uint32_t stream_;
  CallContext context_;
  CallRecord record_;
  const Method& method_;
  std::size_t max_message_bytes_;
  std::atomic<std::size_t>& live_;
  std::string inbound_;  // stream data not yet a whole message
  std::deque<std::shared_ptr<Slot>> queue_;
  std::size_t outstanding_ = 0;  // slots whose answer has not come
  std::vector<std::string> collected_;
  bool dispatched_ = false;
  bool remote_done_ = false;    // the client sent END_STREAM
  bool reading_done_ = false;   // no more messages will be handled
  bool paused_ = false;         // a bidi stream with kStreamWindow answers pending
  std::size_t held_bytes_ = 0;  // data taken in while paused: its window is given back after
  bool headers_sent_ = false;
  bool broken_ = false;  // the client is gone: nothing more can be written
  bool finished_ = false;
};

}  // namespace onepass::api::grpc_server
