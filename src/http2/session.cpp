#include "http2/session.h"

#include <algorithm>

namespace onepass::http2 {

namespace {

constexpr std::string_view kPreface = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";
constexpr std::size_t kFrameHeaderBytes = 9;
// SETTINGS_MAX_FRAME_SIZE's default: this side never advertises more.
constexpr std::size_t kMaxFramePayload = 16384;
constexpr std::int64_t kMaxWindow = 0x7fffffff;

enum FrameType : std::uint8_t {
  kData = 0x0,
  kHeaders = 0x1,
  kPriority = 0x2,
  kRstStream = 0x3,
  kSettings = 0x4,
  kPushPromise = 0x5,
  kPing = 0x6,
  kGoAway = 0x7,
  kWindowUpdate = 0x8,
  kContinuation = 0x9,
};

enum Flag : std::uint8_t {
  kEndStream = 0x1,
  kAck = 0x1,
  kEndHeaders = 0x4,
  kPadded = 0x8,
  kPriorityFlag = 0x20,
};

enum Setting : std::uint16_t {
  kEnablePush = 0x2,
  kMaxConcurrentStreams = 0x3,
  kInitialWindowSize = 0x4,
  kMaxFrameSize = 0x5,
  kMaxHeaderListSize = 0x6,
};

std::uint32_t read32(const char* p) {
  const auto* u = reinterpret_cast<const unsigned char*>(p);
  return (std::uint32_t{u[0]} << 24) | (std::uint32_t{u[1]} << 16) | (std::uint32_t{u[2]} << 8) |
         u[3];
}

void append32(std::string& out, std::uint32_t value) {
  out.push_back(static_cast<char>(value >> 24));
  out.push_back(static_cast<char>(value >> 16));
  out.push_back(static_cast<char>(value >> 8));
  out.push_back(static_cast<char>(value));
}

void append_setting(std::string& out, std::uint16_t id, std::uint32_t value) {
  out.push_back(static_cast<char>(id >> 8));
  out.push_back(static_cast<char>(id));
  append32(out, value);
}

}  // namespace

Session::Session(Role role, StreamHandler& handler, SessionLimits limits)
    : role_(role), handler_(handler), limits_(limits) {
  std::string settings;
  if (role_ == Role::kClient) {
    output_.append(kPreface);
    preface_seen_ = true;  // a server's preface is its first SETTINGS
    append_setting(settings, kEnablePush, 0);
  }
  append_setting(settings, kMaxConcurrentStreams, limits_.max_concurrent_streams);
  append_setting(settings, kInitialWindowSize, limits_.stream_window);
  append_setting(settings, kMaxHeaderListSize,
                 static_cast<std::uint32_t>(
                     std::min<std::size_t>(limits_.max_header_list_bytes, 0xffffffffu)));
  write_frame(kSettings, 0, 0, settings);
  if (limits_.connection_window > connection_receive_window_) {
    write_window_update(
        0, static_cast<std::uint32_t>(limits_.connection_window - connection_receive_window_));
    connection_receive_window_ = limits_.connection_window;
  }
}

bool Session::receive(std::string_view bytes) {
  if (failed_) return false;
  input_.append(bytes);
  ErrorCode code = ErrorCode::kNoError;
  std::string reason;
  try {
    read_frames();
  } catch (const ConnectionError& error) {
    code = error.code;
    reason = error.reason;
  } catch (const HpackError& error) {
    code = ErrorCode::kCompressionError;
    reason = error.what();
  }
  if (code != ErrorCode::kNoError) {
    failed_ = true;
    failure_ = reason;
    std::string payload;
    append32(payload, last_stream_);
    append32(payload, static_cast<std::uint32_t>(code));
    payload += reason;
    write_frame(kGoAway, 0, 0, payload);
    // Every stream is gone with the connection.
    std::vector<std::uint32_t> open;
    for (const auto& [id, stream] : streams_) open.push_back(id);
    streams_.clear();
    for (const std::uint32_t id : open) handler_.on_reset(id);
    return false;
  }
  // The connection window reopens as data arrives: each stream's own window holds back a
  // handler that is not taking its data in.
  if (connection_unacknowledged_ >= limits_.connection_window / 2) {
    write_window_update(0, static_cast<std::uint32_t>(connection_unacknowledged_));
    connection_receive_window_ += static_cast<std::int64_t>(connection_unacknowledged_);
    connection_unacknowledged_ = 0;
  }
  return !(peer_going_away_ && streams_.empty());
}

void Session::read_frames() {
  std::size_t pos = 0;
  if (!preface_seen_) {
    const std::size_t have = std::min(input_.size(), kPreface.size());
    if (std::string_view(input_).substr(0, have) != kPreface.substr(0, have))
      throw ConnectionError{ErrorCode::kProtocolError, "not an HTTP/2 connection preface"};
    if (have < kPreface.size()) return;
    preface_seen_ = true;
    pos = kPreface.size();
  }
  while (!failed_ && input_.size() - pos >= kFrameHeaderBytes) {
    const auto* head = reinterpret_cast<const unsigned char*>(input_.data() + pos);
    const std::size_t length = (std::size_t{head[0]} << 16) | (std::size_t{head[1]} << 8) | head[2];
    if (length > kMaxFramePayload)
      throw ConnectionError{ErrorCode::kFrameSizeError,
                            "frame larger than SETTINGS_MAX_FRAME_SIZE"};
    if (input_.size() - pos - kFrameHeaderBytes < length) break;
    const std::uint8_t type = head[3];
    const std::uint8_t flags = head[4];
    const std::uint32_t stream = read32(input_.data() + pos + 5) & 0x7fffffffu;
    const std::string_view payload(input_.data() + pos + kFrameHeaderBytes, length);
    handle_frame(type, flags, stream, payload);
    pos += kFrameHeaderBytes + length;
  }
  input_.erase(0, pos);
}

void Session::handle_frame(std::uint8_t type, std::uint8_t flags, std::uint32_t stream,
                           std::string_view payload) {
  if (!settings_seen_ && !(type == kSettings && (flags & kAck) == 0))
    throw ConnectionError{ErrorCode::kProtocolError, "the connection must open with SETTINGS"};
  // A header block's frames come in one run (RFC 9113 6.10).
  if (header_stream_ != 0 && (type != kContinuation || stream != header_stream_))
    throw ConnectionError{ErrorCode::kProtocolError, "header block interrupted"};
  switch (type) {
    case kData:
      return on_data_frame(flags, stream, payload);
    case kHeaders:
      return on_headers_frame(flags, stream, payload);
    case kPriority:
      if (stream == 0) throw ConnectionError{ErrorCode::kProtocolError, "PRIORITY on stream 0"};
      if (payload.size() != 5)
        throw ConnectionError{ErrorCode::kFrameSizeError, "PRIORITY of the wrong size"};
      return;  // advice only: every stream is served as it comes
    case kRstStream:
      return on_rst_stream(stream, payload);
    case kSettings:
      return on_settings(flags, stream, payload);
    case kPushPromise:
      throw ConnectionError{ErrorCode::kProtocolError, "a client cannot push"};
    case kPing:
      return on_ping(flags, stream, payload);
    case kGoAway:
      return on_goaway(stream, payload);
    case kWindowUpdate:
      return on_window_update(stream, payload);
    case kContinuation:
      if (header_stream_ == 0)
        throw ConnectionError{ErrorCode::kProtocolError, "CONTINUATION without HEADERS"};
      if (header_block_.size() + payload.size() > 2 * limits_.max_header_list_bytes + 1024)
        throw ConnectionError{ErrorCode::kProtocolError, "header block too large"};
      header_block_.append(payload);
      if ((flags & kEndHeaders) != 0) on_header_block(stream, header_end_stream_);
      return;
    default:
      return;  // unknown frame types are ignored (RFC 9113 4.1)
  }
}

namespace {

// The payload without its padding (PADDED flag), once bad_padding() has said it is whole.
std::string_view unpadded(std::uint8_t flags, std::string_view payload) {
  if ((flags & kPadded) == 0) return payload;
  const std::size_t pad = static_cast<unsigned char>(payload[0]);
  return payload.substr(1, payload.size() - 1 - pad);
}

bool bad_padding(std::uint8_t flags, std::string_view payload) {
  return (flags & kPadded) != 0 &&
         (payload.empty() || static_cast<unsigned char>(payload[0]) >= payload.size());
}

}  // namespace

void Session::on_headers_frame(std::uint8_t flags, std::uint32_t stream, std::string_view payload) {
  if (stream == 0) throw ConnectionError{ErrorCode::kProtocolError, "HEADERS on stream 0"};
  if (bad_padding(flags, payload))
    throw ConnectionError{ErrorCode::kProtocolError, "padding longer than the frame"};
  std::string_view block = unpadded(flags, payload);
  if ((flags & kPriorityFlag) != 0) {
    if (block.size() < 5) throw ConnectionError{ErrorCode::kFrameSizeError, "HEADERS too short"};
    block.remove_prefix(5);
  }
  header_block_.assign(block);
  header_stream_ = stream;
  header_end_stream_ = (flags & kEndStream) != 0;
  if ((flags & kEndHeaders) != 0) on_header_block(stream, header_end_stream_);
}

void Session::on_header_block(std::uint32_t stream, bool end_stream) {
  header_stream_ = 0;
  // Every block is decoded, even one refused below: the decoder's table must stay in step.
  std::vector<Header> headers;
  decoder_.decode(header_block_, headers, limits_.max_header_list_bytes);
  header_block_.clear();

  if (role_ == Role::kClient) return on_response_headers(stream, std::move(headers), end_stream);
  const auto it = streams_.find(stream);
  if (it != streams_.end()) {  // trailers: they end the request
    if (it->second.remote_closed || !end_stream) {
      write_reset(stream,
                  it->second.remote_closed ? ErrorCode::kStreamClosed : ErrorCode::kProtocolError);
      streams_.erase(it);
      handler_.on_reset(stream);
      return;
    }
    it->second.remote_closed = true;
    handler_.on_data(stream, std::string_view(), true);
    return;
  }
  if (stream <= last_stream_) return;  // a stream this side reset or ended: too late to matter
  if (stream % 2 == 0)
    throw ConnectionError{ErrorCode::kProtocolError, "a client stream id must be odd"};
  last_stream_ = stream;
  if (going_away_ || streams_.size() >= limits_.max_concurrent_streams) {
    write_reset(stream, ErrorCode::kRefusedStream);
    return;
  }
  Stream state;
  state.send_window = peer_initial_window_;
  state.receive_window = limits_.stream_window;
  state.remote_closed = end_stream;
  streams_.emplace(stream, std::move(state));
  handler_.on_headers(stream, std::move(headers), end_stream);
}

void Session::on_response_headers(std::uint32_t stream, std::vector<Header> headers,
                                  bool end_stream) {
  const auto it = streams_.find(stream);
  if (it == streams_.end()) {
    if (never_opened(stream))
      throw ConnectionError{ErrorCode::kProtocolError, "HEADERS on a stream not opened"};
    return;  // a stream this side reset
  }
  if (it->second.remote_closed) {
    write_reset(stream, ErrorCode::kStreamClosed);
    streams_.erase(it);
    handler_.on_reset(stream);
    return;
  }
  it->second.remote_closed = end_stream;
  handler_.on_headers(stream, std::move(headers), end_stream);
  if (end_stream) response_ended(stream);
}

void Session::response_ended(std::uint32_t stream) {
  const auto it = streams_.find(stream);
  if (it == streams_.end()) return;
  // The answer is whole: what the request still had to send is not needed.
  if (!it->second.local_closed) write_reset(stream, ErrorCode::kNoError);
  streams_.erase(it);
}

bool Session::never_opened(std::uint32_t stream) const {
  if (role_ == Role::kServer) return stream > last_stream_;
  return stream % 2 == 0 || stream >= next_stream_;
}

void Session::on_data_frame(std::uint8_t flags, std::uint32_t stream, std::string_view payload) {
  if (stream == 0) throw ConnectionError{ErrorCode::kProtocolError, "DATA on stream 0"};
  // Flow control counts the whole payload, padding included.
  const std::size_t length = payload.size();
  if (static_cast<std::int64_t>(length) > connection_receive_window_)
    throw ConnectionError{ErrorCode::kFlowControlError, "DATA past the connection window"};
  connection_receive_window_ -= static_cast<std::int64_t>(length);
  connection_unacknowledged_ += length;
  if (bad_padding(flags, payload))
    throw ConnectionError{ErrorCode::kProtocolError, "padding longer than the frame"};
  const std::string_view data = unpadded(flags, payload);

  const auto it = streams_.find(stream);
  if (it == streams_.end()) {
    if (never_opened(stream))
      throw ConnectionError{ErrorCode::kProtocolError, "DATA on a stream not opened"};
    return;  // a stream this side reset or ended: dropped
  }
  Stream& state = it->second;
  if (state.remote_closed || length > state.receive_window) {
    write_reset(stream,
                state.remote_closed ? ErrorCode::kStreamClosed : ErrorCode::kFlowControlError);
    streams_.erase(it);
    handler_.on_reset(stream);
    return;
  }
  state.receive_window -= static_cast<std::uint32_t>(length);
  state.unacknowledged += length - data.size();  // the padding is taken in at once
  const bool end_stream = (flags & kEndStream) != 0;
  state.remote_closed = end_stream;
  handler_.on_data(stream, data, end_stream);
  if (end_stream && role_ == Role::kClient) response_ended(stream);
}

void Session::on_settings(std::uint8_t flags, std::uint32_t stream, std::string_view payload) {
  if (stream != 0) throw ConnectionError{ErrorCode::kProtocolError, "SETTINGS on a stream"};
  if ((flags & kAck) != 0) {
    if (!payload.empty())
      throw ConnectionError{ErrorCode::kFrameSizeError, "SETTINGS acknowledgement with a payload"};
    return;
  }
  if (payload.size() % 6 != 0)
    throw ConnectionError{ErrorCode::kFrameSizeError, "SETTINGS of the wrong size"};
  bool windows_grew = false;
  for (std::size_t i = 0; i < payload.size(); i += 6) {
    const auto id = static_cast<std::uint16_t>((static_cast<unsigned char>(payload[i]) << 8) |
                                               static_cast<unsigned char>(payload[i + 1]));
    const std::uint32_t value = read32(payload.data() + i + 2);
    switch (id) {
      case kEnablePush:
        if (value > 1) throw ConnectionError{ErrorCode::kProtocolError, "bad SETTINGS_ENABLE_PUSH"};
        break;
      case kInitialWindowSize: {
        if (value > kMaxWindow)
          throw ConnectionError{ErrorCode::kFlowControlError, "bad SETTINGS_INITIAL_WINDOW_SIZE"};
        const std::int64_t delta = std::int64_t{value} - peer_initial_window_;
        for (auto& [stream_id, open] : streams_) {
          open.send_window += delta;
          if (open.send_window > kMaxWindow)
            throw ConnectionError{ErrorCode::kFlowControlError, "stream window overflow"};
        }
        peer_initial_window_ = value;
        windows_grew = windows_grew || delta > 0;
        break;
      }
      case kMaxConcurrentStreams:
        peer_max_streams_ = value;
        break;
      case kMaxFrameSize:
        if (value < 16384 || value > 0xffffff)
          throw ConnectionError{ErrorCode::kProtocolError, "bad SETTINGS_MAX_FRAME_SIZE"};
        peer_max_frame_ = value;
        break;
      default:
        break;  // the header table size: the encoder never indexes, so any size will do
    }
  }
  settings_seen_ = true;
  write_frame(kSettings, kAck, 0, std::string_view());
  if (windows_grew) flush_all();
}

void Session::on_window_update(std::uint32_t stream, std::string_view payload) {
  if (payload.size() != 4)
    throw ConnectionError{ErrorCode::kFrameSizeError, "WINDOW_UPDATE of the wrong size"};
  const std::uint32_t increment = read32(payload.data()) & 0x7fffffffu;
  if (stream == 0) {
    if (increment == 0)
      throw ConnectionError{ErrorCode::kProtocolError, "WINDOW_UPDATE of zero on the connection"};
    connection_send_window_ += increment;
    if (connection_send_window_ > kMaxWindow)
      throw ConnectionError{ErrorCode::kFlowControlError, "connection window overflow"};
    return flush_all();
  }
  const auto it = streams_.find(stream);
  if (it == streams_.end()) {
    if (never_opened(stream))
      throw ConnectionError{ErrorCode::kProtocolError, "WINDOW_UPDATE on a stream not opened"};
    return;
  }
  it->second.send_window += increment;
  if (increment == 0 || it->second.send_window > kMaxWindow) {
    write_reset(stream, increment == 0 ? ErrorCode::kProtocolError : ErrorCode::kFlowControlError);
    streams_.erase(it);
    handler_.on_reset(stream);
    return;
  }
  flush(stream);
}

void Session::on_rst_stream(std::uint32_t stream, std::string_view payload) {
  if (stream == 0) throw ConnectionError{ErrorCode::kProtocolError, "RST_STREAM on stream 0"};
  if (payload.size() != 4)
    throw ConnectionError{ErrorCode::kFrameSizeError, "RST_STREAM of the wrong size"};
  const auto it = streams_.find(stream);
  // RST_STREAM on a stream not opened is a protocol error (RFC 9113 6.4), but gRPC C-core
  // sends one for a call it cancels before its HEADERS went out: nothing to do, as for a
  // stream already closed.
  if (it == streams_.end()) return;
  streams_.erase(it);
  handler_.on_reset(stream);
}

void Session::on_ping(std::uint8_t flags, std::uint32_t stream, std::string_view payload) {
  if (stream != 0) throw ConnectionError{ErrorCode::kProtocolError, "PING on a stream"};
  if (payload.size() != 8) throw ConnectionError{ErrorCode::kFrameSizeError, "PING not 8 bytes"};
  if ((flags & kAck) == 0) write_frame(kPing, kAck, 0, payload);
}

void Session::on_goaway(std::uint32_t stream, std::string_view payload) {
  if (stream != 0) throw ConnectionError{ErrorCode::kProtocolError, "GOAWAY on a stream"};
  if (payload.size() < 8)
    throw ConnectionError{ErrorCode::kFrameSizeError, "GOAWAY of the wrong size"};
  peer_going_away_ = true;
  goaway_last_stream_ = std::min(goaway_last_stream_, read32(payload.data()) & 0x7fffffffu);
  if (role_ == Role::kServer) return;
  // The streams above the server's last were never served: they fail, to be sent again.
  std::vector<std::uint32_t> unserved;
  for (const auto& [id, state] : streams_)
    if (id > goaway_last_stream_) unserved.push_back(id);
  for (const std::uint32_t id : unserved) {
    streams_.erase(id);
    handler_.on_reset(id);
  }
}

std::uint32_t Session::open(const std::vector<Header>& headers) {
  if (role_ != Role::kClient || failed_ || peer_going_away_ || next_stream_ > 0x7fffffffu ||
      streams_.size() >= peer_max_streams_)
    return 0;
  const std::uint32_t stream = next_stream_;
  next_stream_ += 2;
  Stream state;
  state.send_window = peer_initial_window_;
  state.receive_window = limits_.stream_window;
  state.headers_sent = true;
  streams_.emplace(stream, std::move(state));
  std::string block;
  for (const auto& header : headers) encode_header(header.name, header.value, block);
  write_header_block(stream, block, false);
  return stream;
}

void Session::end_request(std::uint32_t stream) {
  const auto it = streams_.find(stream);
  if (it == streams_.end() || it->second.end_pending || it->second.local_closed) return;
  it->second.end_pending = true;
  flush(stream);
}

void Session::send_headers(std::uint32_t stream, const std::vector<Header>& headers) {
  const auto it = streams_.find(stream);
  if (it == streams_.end() || it->second.headers_sent) return;
  std::string block;
  for (const auto& header : headers) encode_header(header.name, header.value, block);
  write_header_block(stream, block, false);
  it->second.headers_sent = true;
}

void Session::send_data(std::uint32_t stream, std::string_view data) {
  const auto it = streams_.find(stream);
  if (it == streams_.end() || it->second.trailers_pending || it->second.end_pending ||
      it->second.local_closed)
    return;
  it->second.pending.append(data);
  flush(stream);
}

void Session::send_trailers(std::uint32_t stream, const std::vector<Header>& trailers) {
  const auto it = streams_.find(stream);
  if (it == streams_.end() || it->second.trailers_pending) return;
  for (const auto& header : trailers)
    encode_header(header.name, header.value, it->second.trailer_block);
  it->second.trailers_pending = true;
  flush(stream);
}

void Session::reset(std::uint32_t stream, ErrorCode code) {
  const auto it = streams_.find(stream);
  if (it == streams_.end()) return;
  write_reset(stream, code);
  streams_.erase(it);
}

void Session::consumed(std::uint32_t stream, std::size_t bytes) {
  const auto it = streams_.find(stream);
  if (it == streams_.end() || it->second.remote_closed) return;
  Stream& state = it->second;
  state.unacknowledged += bytes;
  if (state.unacknowledged < limits_.stream_window / 2) return;
  write_window_update(stream, static_cast<std::uint32_t>(state.unacknowledged));
  state.receive_window += static_cast<std::uint32_t>(state.unacknowledged);
  state.unacknowledged = 0;
}

void Session::go_away() {
  if (going_away_ || failed_) return;
  going_away_ = true;
  std::string payload;
  append32(payload, last_stream_);
  append32(payload, static_cast<std::uint32_t>(ErrorCode::kNoError));
  write_frame(kGoAway, 0, 0, payload);
}

void Session::flush(std::uint32_t stream) {
  const auto it = streams_.find(stream);
  if (it == streams_.end()) return;
  Stream& state = it->second;
  std::size_t sent = 0;
  while (sent < state.pending.size()) {
    const std::int64_t allowed = std::min<std::int64_t>(
        {state.send_window, connection_send_window_, std::int64_t{peer_max_frame_}});
    if (allowed <= 0) break;
    const std::size_t chunk =
        std::min(state.pending.size() - sent, static_cast<std::size_t>(allowed));
    write_frame(kData, 0, stream, std::string_view(state.pending).substr(sent, chunk));
    sent += chunk;
    state.send_window -= static_cast<std::int64_t>(chunk);
    connection_send_window_ -= static_cast<std::int64_t>(chunk);
  }
  state.pending.erase(0, sent);
  if (!state.pending.empty()) return;
  if (state.end_pending) {
    write_frame(kData, kEndStream, stream, std::string_view());
    state.end_pending = false;
    state.local_closed = true;
    return;
  }
  if (!state.trailers_pending) return;
  write_header_block(stream, state.trailer_block, true);
  // The response is whole: a request still coming is not needed (RFC 9113 8.1).
  if (!state.remote_closed) write_reset(stream, ErrorCode::kNoError);
  streams_.erase(it);
}

void Session::flush_all() {
  std::vector<std::uint32_t> waiting;
  for (const auto& [id, state] : streams_)
    if (!state.pending.empty() || state.trailers_pending || state.end_pending)
      waiting.push_back(id);
  for (const std::uint32_t id : waiting) flush(id);
}

void Session::write_frame(std::uint8_t type, std::uint8_t flags, std::uint32_t stream,
                          std::string_view payload) {
  const std::size_t length = payload.size();
  output_.push_back(static_cast<char>(length >> 16));
  output_.push_back(static_cast<char>(length >> 8));
  output_.push_back(static_cast<char>(length));
  output_.push_back(static_cast<char>(type));
  output_.push_back(static_cast<char>(flags));
  append32(output_, stream);
  output_.append(payload);
}

void Session::write_header_block(std::uint32_t stream, const std::string& block, bool end_stream) {
  std::size_t offset = 0;
  bool first = true;
  do {
    const std::size_t chunk = std::min<std::size_t>(block.size() - offset, peer_max_frame_);
    const bool last = offset + chunk == block.size();
    std::uint8_t flags = last ? kEndHeaders : 0;
    if (first && end_stream) flags |= kEndStream;
    write_frame(first ? kHeaders : kContinuation, flags, stream,
                std::string_view(block).substr(offset, chunk));
    offset += chunk;
    first = false;
  } while (offset < block.size());
}

void Session::write_window_update(std::uint32_t stream, std::uint32_t increment) {
  std::string payload;
  append32(payload, increment);
  write_frame(kWindowUpdate, 0, stream, payload);
}

void Session::write_reset(std::uint32_t stream, ErrorCode code) {
  std::string payload;
  append32(payload, static_cast<std::uint32_t>(code));
  write_frame(kRstStream, 0, stream, payload);
}

}  // namespace onepass::http2
