// libFuzzer target: the server side of an HTTP/2 connection (http2::Session) on arbitrary
// bytes after the client preface, fed in pieces whose sizes the input's first byte sets, with a
// handler that answers every request as the gRPC server does (headers, data, trailers) and
// consumes what it reads. Any input must end in a GOAWAY or be taken in, never crash, hang or
// grow the output past what was asked of it.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "http2/session.h"

namespace {

using onepass::http2::Header;
using onepass::http2::Session;

class Answering final : public onepass::http2::StreamHandler {
 public:
  Session* session = nullptr;

  void on_headers(std::uint32_t stream, std::vector<Header> headers, bool end_stream) override {
    if (headers.size() % 3 == 1) {  // refused before its body, as a bad call is
      session->send_trailers(stream, {{":status", "200"}, {"grpc-status", "3"}});
      return;
    }
    session->send_headers(stream, {{":status", "200"}, {"content-type", "application/grpc"}});
    if (end_stream) answer(stream, 40000);
  }
  void on_data(std::uint32_t stream, std::string_view data, bool end_stream) override {
    session->consumed(stream, data.size());
    if (end_stream) answer(stream, data.size() * 3 + 1);
  }
  void on_reset(std::uint32_t) override {}

 private:
  // Larger than a frame and the initial window, so the flow-controlled path runs.
  void answer(std::uint32_t stream, std::size_t bytes) {
    session->send_data(stream, std::string(bytes % 100000, 'x'));
    session->send_trailers(stream, {{"grpc-status", "0"}});
  }
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::size_t piece = 1 + data[0] % 64;
  const std::string_view input(reinterpret_cast<const char*>(data) + 1, size - 1);
  Answering handler;
  Session session(onepass::http2::Role::kServer, handler);
  handler.session = &session;
  session.receive("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n");
  for (std::size_t at = 0; at < input.size(); at += piece) {
    if (!session.receive(input.substr(at, piece))) break;
    session.output().clear();
  }
  return 0;
}
