// A loopback OTLP/HTTP trace receiver for the tests: an http::Server on 127.0.0.1 that keeps
// every POST it gets and answers as the test scripts it (a status, an optional Retry-After, a
// delay before answering: a refusing or slow collector). Its header names no HTTP type, so a test
// source may include the HTTP client's headers beside it.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace onepass::testing {

struct ReceivedExport {
  std::string path;
  std::string content_type;
  std::vector<std::pair<std::string, std::string>> headers;  // lower-case names
  std::string body;
};

class OtlpReceiver {
 public:
  OtlpReceiver();
  ~OtlpReceiver();

  std::uint16_t port() const;
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port()); }

  // How each later POST is answered: `status` (200 by default), after `delay`; a Retry-After
  // header when `retry_after_seconds` >= 0. The first `times` answers only, then 200 again
  // (times < 0: every answer).
  void answer(int status, std::chrono::milliseconds delay = {}, int times = -1,
              int retry_after_seconds = -1);

  std::vector<ReceivedExport> exports() const;
  std::size_t count() const;
  // Waits until `n` POSTs arrived; false after `timeout`.
  bool wait_for(std::size_t n, std::chrono::milliseconds timeout) const;

 private:
  struct State;
  std::shared_ptr<State> state_;
};

}  // namespace onepass::testing
