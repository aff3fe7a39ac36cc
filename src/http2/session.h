// One HTTP/2 connection (RFC 9113), either side, without I/O: receive() takes the bytes read
// from the socket and calls the StreamHandler for each stream's header blocks, data and reset,
// and whatever must go out (the preface, SETTINGS and PING acknowledgements, window updates,
// requests or responses) collects in output() for the caller to write. Flow control is kept
// both ways: what it sends waits for the peer's windows, and a stream's receive window reopens
// as the handler consumes its data, so a handler that stops consuming holds its peer back.
//
// A server's streams are opened by the client's HEADERS; a client opens its own with open()
// (the gRPC bench's transport) and never accepts a push.
//
// Not thread-safe: one connection's session is driven by one thread or strand at a time.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "http2/hpack.h"

namespace onepass::http2 {

enum class ErrorCode : std::uint32_t {
  kNoError = 0x0,
  kProtocolError = 0x1,
  kInternalError = 0x2,
  kFlowControlError = 0x3,
  kStreamClosed = 0x5,
  kFrameSizeError = 0x6,
  kRefusedStream = 0x7,
  kCancel = 0x8,
  kCompressionError = 0x9,
};

struct SessionLimits {
  // Advertised as SETTINGS_MAX_HEADER_LIST_SIZE; a larger request header block is refused.
  std::size_t max_header_list_bytes = 16 * 1024;
  // Advertised as SETTINGS_MAX_CONCURRENT_STREAMS; a stream past it is refused (REFUSED_STREAM,
  // which clients retry).
  std::uint32_t max_concurrent_streams = 1024;
  // Each stream's receive window (SETTINGS_INITIAL_WINDOW_SIZE) and the connection's. What a
  // stream that stops taking its data in may hold; a message larger than it still arrives, as
  // its window reopens while it comes.
  std::uint32_t stream_window = 256u << 10;
  std::uint32_t connection_window = 1u << 24;
};

enum class Role { kServer, kClient };

// What a session reports of its streams. Called from inside receive().
class StreamHandler {
 public:
  // A header block, decoded: on a server, a new request's (`end_stream`: it has no body; a
  // request's trailers come as on_data()'s end); on a client, the response's headers, then its
  // trailers (`end_stream`), or both in one block.
  virtual void on_headers(std::uint32_t stream, std::vector<Header> headers, bool end_stream) = 0;
  // Body bytes of an open request (`data` may be empty when only the end comes). The handler
  // calls consumed() once it has taken them in, to reopen the stream's window.
  virtual void on_data(std::uint32_t stream, std::string_view data, bool end_stream) = 0;
  // The client reset the stream, or the connection failed: nothing more can be sent on it.
  virtual void on_reset(std::uint32_t stream) = 0;

 protected:
  ~StreamHandler() = default;
};

class Session {
 public:
  Session(Role role, StreamHandler& handler, SessionLimits limits = {});

  // Takes bytes read from the socket. False once the connection is over (a protocol error, with
  // GOAWAY in output(), or the peer's GOAWAY with no stream left): write output() and close.
  bool receive(std::string_view bytes);
  // Bytes to write; the caller takes them (swap or clear) as it writes them.
  std::string& output() { return output_; }

  // A client's new request stream with its header block (pseudo-headers first); 0 when the
  // connection can take no new stream (the server's GOAWAY, or its stream limit).
  std::uint32_t open(const std::vector<Header>& headers);
  // The response's header block (":status" first).
  void send_headers(std::uint32_t stream, const std::vector<Header>& headers);
  // Body bytes, sent as the peer's windows allow.
  void send_data(std::uint32_t stream, std::string_view data);
  // A client's end of its request (an empty DATA frame with END_STREAM, after the data queued).
  void end_request(std::uint32_t stream);
  // Ends the stream with trailers (after the data queued before them), or, without
  // send_headers() before, a headers-only response. A request still being sent is then reset
  // with NO_ERROR: the client need not send the rest.
  void send_trailers(std::uint32_t stream, const std::vector<Header>& trailers);
  // Abandons a stream (RST_STREAM), e.g. a request refused before it was read.
  void reset(std::uint32_t stream, ErrorCode code);
  // Reopens `bytes` of a stream's receive window: the handler has taken in that much data.
  void consumed(std::uint32_t stream, std::size_t bytes);

  // GOAWAY naming the last stream taken: no new stream will be served (a drain).
  void go_away();
  // Streams open in either direction.
  std::size_t open_streams() const { return streams_.size(); }
  // The client's preface and first SETTINGS have come.
  bool established() const { return settings_seen_; }
  // Why the connection failed (what its GOAWAY said); empty while it has not.
  const std::string& failure() const { return failure_; }

 private:
  struct Stream {
    std::int64_t send_window = 0;
    std::uint32_t receive_window = 0;  // what the peer may still send
    std::size_t unacknowledged = 0;    // consumed but not yet given back in a WINDOW_UPDATE
    bool remote_closed = false;        // END_STREAM received
    bool local_closed = false;         // END_STREAM sent
    bool headers_sent = false;
    std::string pending;  // DATA waiting for a window
    bool trailers_pending = false;
    bool end_pending = false;  // a client's END_STREAM, once the data pending is sent
    std::string trailer_block;
  };

  // A connection error: GOAWAY with `code`, and receive() returns false from now on.
  struct ConnectionError {
    ErrorCode code;
    const char* reason;
  };

  void read_frames();
  void handle_frame(std::uint8_t type, std::uint8_t flags, std::uint32_t stream,
                    std::string_view payload);
  void on_headers_frame(std::uint8_t flags, std::uint32_t stream, std::string_view payload);
  void on_header_block(std::uint32_t stream, bool end_stream);
  // A client's: the response's headers or trailers.
  void on_response_headers(std::uint32_t stream, std::vector<Header> headers, bool end_stream);
  // A client's stream whose response ended: forgotten, and reset if its request had not.
  void response_ended(std::uint32_t stream);
  void on_data_frame(std::uint8_t flags, std::uint32_t stream, std::string_view payload);
  void on_settings(std::uint8_t flags, std::uint32_t stream, std::string_view payload);
  void on_window_update(std::uint32_t stream, std::string_view payload);
  void on_rst_stream(std::uint32_t stream, std::string_view payload);
  void on_ping(std::uint8_t flags, std::uint32_t stream, std::string_view payload);
  void on_goaway(std::uint32_t stream, std::string_view payload);
  // A stream this side never opened (a server: above the client's last; a client: any it did
  // not open).
  bool never_opened(std::uint32_t stream) const;

  void write_frame(std::uint8_t type, std::uint8_t flags, std::uint32_t stream,
                   std::string_view payload);
  void write_header_block(std::uint32_t stream, const std::string& block, bool end_stream);
  void write_window_update(std::uint32_t stream, std::uint32_t increment);
  void write_reset(std::uint32_t stream, ErrorCode code);
  // Sends what `stream` has pending, as far as the windows allow; closes it when done.
  void flush(std::uint32_t stream);
  void flush_all();

  Role role_;
  StreamHandler& handler_;
  SessionLimits limits_;
  HpackDecoder decoder_;
  std::string input_;  // bytes not yet a whole frame
  std::string output_;
  bool preface_seen_ = false;
  bool settings_seen_ = false;
  bool failed_ = false;
  std::string failure_;
  bool peer_going_away_ = false;
  bool going_away_ = false;
  std::uint32_t last_stream_ = 0;  // a server's: the highest stream the client opened
  std::uint32_t next_stream_ = 1;  // a client's: the id its next stream gets
  std::uint32_t peer_max_streams_ = 0xffffffffu;
  std::map<std::uint32_t, Stream> streams_;
  // A header block in HEADERS + CONTINUATION frames, until END_HEADERS.
  std::string header_block_;
  std::uint32_t header_stream_ = 0;  // nonzero while a block is incomplete
  bool header_end_stream_ = false;
  // The peer's settings and windows for what this side sends.
  std::int64_t peer_initial_window_ = 65535;
  std::uint32_t peer_max_frame_ = 16384;
  std::int64_t connection_send_window_ = 65535;
  std::uint32_t goaway_last_stream_ = 0x7fffffffu;  // the peer's GOAWAY: none above it is served
  // This side's connection receive window.
  std::int64_t connection_receive_window_ = 65535;
  std::size_t connection_unacknowledged_ = 0;
};

}  // namespace onepass::http2
